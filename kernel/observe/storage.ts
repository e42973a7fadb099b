import type { AppStorage } from "../contracts/resources.js";
import type { Instrumentation } from "./instrumentation.js";

/**
 * The app's storage with its calls observed. Other members of the adapter (a streaming put an
 * adapter may add) pass through bound to the adapter itself, so an adapter with private fields
 * keeps working. Without an observer each call costs one property read.
 */
export function observedStorage<S extends AppStorage>(storage: S, instrumentation: Instrumentation): S {
  const observed: AppStorage = {
    get: (key) => {
      const observe = instrumentation.storage;
      return observe ? observe("get", () => storage.get(key)) : storage.get(key);
    },
    set: (key, bytes) => {
      const observe = instrumentation.storage;
      return observe ? observe("set", () => storage.set(key, bytes), bytes.byteLength) : storage.set(key, bytes);
    },
    delete: (key) => {
      const observe = instrumentation.storage;
      return observe ? observe("delete", () => storage.delete(key)) : storage.delete(key);
    },
  };
  // The streaming pair exists on the wrapper exactly when the adapter has it (callers test for it).
  // A stream's call ends when the stream is handed over (a read) or fully stored (a write).
  if (storage.getStream) {
    const getStream = storage.getStream.bind(storage);
    observed.getStream = (key, range) => {
      const observe = instrumentation.storage;
      return observe ? observe("get", () => getStream(key, range)) : getStream(key, range);
    };
  }
  if (storage.setStream) {
    const setStream = storage.setStream.bind(storage);
    observed.setStream = (key, body) => {
      const observe = instrumentation.storage;
      return observe ? observe("set", () => setStream(key, body)) : setStream(key, body);
    };
  }
  return new Proxy(storage, {
    get(target, key) {
      if (typeof key === "string" && key in observed) return observed[key as keyof AppStorage];
      const value = Reflect.get(target, key, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}
