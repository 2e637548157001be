import { defineConfig } from 'vitest/config';

// Test files run in parallel (vitest's default): each test has a session of its own on the one server.
export default defineConfig({ test: { globalSetup: ['./global-setup.ts'] } });
