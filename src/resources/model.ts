// The config of resources lives with the config's types (config/types-resources.ts), which the
// config reads without importing this folder; the resources read it from here.
export * from '../config/types-resources.js';
