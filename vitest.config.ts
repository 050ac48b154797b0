import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    // types-tests/ holds tsd files (*.test-d.ts), run by `tsd`, not by vitest.
    include: ['test/**/*.test.ts'],
  },
});
