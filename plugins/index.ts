/** `trellis/plugins`: every first-party plugin factory. */
export { corsPlugin, type CorsConfig } from "./cors/index.js";
export { healthPlugin, type HealthConfig } from "./health/index.js";
export { authPlugin, type AuthConfig, type AuthAppOptions, type AuthInstance, type AuthExtensions } from "./auth/index.js";
export { resourcesPlugin, type ResourcesPlugin, type ResourceOptions, type ResourcePermission } from "./resources/index.js";
export { bodyLimitPlugin, type BodyLimitConfig } from "./body-limit/index.js";
export { livePlugin } from "./live/index.js";
export { rateLimitPlugin, memoryRateLimitStore, type RateLimitConfig, type RateLimitStore, type RateLimitHit, type RateLimitPluginOptions } from "./rate-limit/index.js";
export { openapiPlugin, type OpenapiConfig } from "./openapi/index.js";
export { mcpPlugin, mcp, type McpConfig } from "./mcp/index.js";
export { adminPlugin, type AdminConfig, type AdminRouter, type AdminSection } from "./admin/index.js";
export { filesPlugin, type FilesConfig, type FilePermission, type FileRecord, type AdminFile, type AdminFilesRouter, type FileLink } from "./files/index.js";
export { telemetryPlugin, METRIC_NAMES, type TelemetryConfig, type MetricsConfig, type Telemetry, type SpanOptions } from "./telemetry/index.js";
export { jobsPlugin, type JobsPlugin, type JobsConfig, type JobsService, type JobDefinitionOptions, type JobHandler, type JobRun, type JobInfo, type SendOptions, type JobRecord, type JobState, type QueueInfo } from "./jobs/index.js";
export { webhooksPlugin, DELIVERY_JOB, type WebhooksConfig, type WebhookEndpoint, type WebhookEvent, type Delivery } from "./webhooks/index.js";
export { mailPlugin, escapeHtml, defaultTemplate, type MailConfig, type Mailer, type MailMessage, type MailTransport, type MailKind, type MailTemplate, type MailTemplateData } from "./mail/index.js";
export { backupsPlugin, BACKUP_JOB, type BackupsConfig, type BackupsService, type BackupInfo, type BackupFailure, type BackupsOverview, type AdminBackupsRouter } from "./backups/index.js";
export { organizationsPlugin, NO_ACTIVE_ORGANIZATION, orgRulePermission, type OrgRule, type OrganizationsConfig, type Membership, type Tenancy, type PermissionStatements } from "./organizations/index.js";
