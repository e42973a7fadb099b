export { landOnPages, landings } from "./landing.js";
export { signInMethods, type SignInMethods } from "./methods.js";
export { pagesSettings, type AuthPagesConfig, type AuthPagesOptions } from "./options.js";
export { pageRoutes } from "./routes.js";
