import { defineConfig } from 'vitest/config';

export default defineConfig({ test: { include: ['users.test.ts'] } });
