import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

const source = (path: string) => fileURLToPath(new URL(path, import.meta.url));

export default defineConfig({
  resolve: {
    // Examples import the package by name, as users do; under vitest that is this repository's
    // sources (the same modules the tests import, so classes such as SegkitRangeError are one).
    // Under node (npm run example) the name resolves to dist/ through package.json "exports".
    alias: [
      { find: /^segkit\/testing$/, replacement: source('./src/testing.ts') },
      { find: /^segkit$/, replacement: source('./src/index.ts') },
    ],
  },
  test: {
    // types-tests/ holds tsd files (*.test-d.ts), run by `tsd`, not by vitest.
    include: ['test/**/*.test.ts', 'examples/**/*.test.ts'],
  },
});
