/**
 * `trellis/schema`: declare schema versions and derive their row, insert and Kysely types.
 * Only what SPEC.md lists as runtime members is exported as a value; the rest are types.
 */
export { schema, type SchemaBuilder } from "./schema.js";
export {
  timestamps,
  type Column,
  type ColumnBuilder,
  type ColumnState,
  type ColumnStateOf,
  type Describe,
  type EnumOptions,
} from "./columns.js";
export { parseSet, toSet } from "./sets.js";
export type { SearchColumns, SearchLanguage, SearchOptions } from "./search.js";
export type {
  ApiKeyColumns,
  ApiKeyTables,
  AuthAccountColumns,
  AuthOptions,
  AuthRelations,
  AuthSessionColumns,
  AuthTables,
  AuthUserColumns,
  AuthVerificationColumns,
} from "./auth-tables.js";
export type { PasskeyColumns, PasskeyTables, SignInOptions, SsoProviderColumns, SsoTables, TwoFactorColumns, TwoFactorTables } from "./signin-tables.js";
export type {
  OrganizationsFlag,
  OrganizationTables,
  OrganizationRelations,
  TeamTables,
  MemberColumns,
  OrganizationColumns,
  InvitationColumns,
} from "./organization-tables.js";
export type {
  EntityIdOf,
  FileColumns,
  FileRelations,
  FilesOptions,
  FileTables,
  PivotColumns,
  PivotTables,
  UnownedFileColumns,
} from "./files-tables.js";
export type { DescribeRelations, RelationBuilder, RelationDef } from "./relations.js";
export type {
  AddTable,
  ColumnsRow,
  InferDB,
  InsertOf,
  KyselyDatabase,
  Merge,
  MergeTables,
  PrimaryKeyOf,
  RelationMapOf,
  RelationState,
  RelationsOf,
  RowOf,
  SchemaResult,
  SelectOf,
  TableName,
  TablesOf,
} from "./types.js";
export type {
  ColumnWhere,
  EqualityFilter,
  FilterValue,
  JsonNullFilter,
  ManyFilter,
  NullFilter,
  OneFilter,
  OrderByEntry,
  OrderedFilter,
  QueryOf,
  RelationFilter,
  TextFilter,
  Where,
  WhereOf,
} from "../db/query-types.js";
export type {
  ColumnDefault,
  ColumnModel,
  ColumnType,
  ForeignKeyAction,
  ForeignKeyActions,
  RelationKind,
  RelationModel,
  SchemaModel,
  SearchModel,
  SearchWeight,
  TableModel,
} from "./model.js";
