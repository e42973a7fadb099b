/** `trellis/presets`: the plugin lists `App` and slimmer apps are assembled from. */
export { defaultPreset, type PresetOptions } from "./default.js";
export { rpcPreset } from "./rpc.js";
