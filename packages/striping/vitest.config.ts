import { defineProject } from 'vitest/config';

export default defineProject({ test: { name: 'striping', include: ['src/**/*.test.ts'] } });
