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
    // The CPU backend's big cases (sorted top-k of 10000, 150K-key rows) take seconds on a 2-core
    // machine running other files beside them; vitest's 5 s would fail them by the clock alone.
    testTimeout: 60_000,
  },
});
