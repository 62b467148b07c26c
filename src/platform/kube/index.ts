// The real-cluster platform: only re-exports (the work is in the modules next to it).
export { KubePlatform, type KubePlatformOptions, type ClientMode } from './platform.js';
export { loadKubeConnection, type KubeConnection, type KubeConnectionOptions } from './connection.js';
export { cleanupLeftovers, type CleanupResult } from './cleanup.js';
