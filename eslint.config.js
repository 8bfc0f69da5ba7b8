// @ts-check
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import reactHooks from 'eslint-plugin-react-hooks';
import globals from 'globals';

export default tseslint.config(
  {
    ignores: [
      '**/dist/**',
      '**/node_modules/**',
      '**/coverage/**',
      'e2e/test-results/**',
      // The types of the launcher's plain-JS helper, for the tests that import it; in no project.
      'apps/agent/bin/*.d.ts',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      globals: { ...globals.node },
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_' },
      ],
      'no-console': 'off',
      // Fastify plugins and route handlers are async by contract (FastifyPluginAsync), with or
      // without an await inside; the rule would have every such plugin rewritten as callbacks.
      '@typescript-eslint/require-await': 'off',
    },
  },
  {
    // Tests read JSON bodies (`res.json()`, `inject(...).json()`) as `any` on purpose: the
    // assertions check their shape. Everything else of the type-checked set applies to them,
    // including no-floating-promises and no-misused-promises.
    files: ['**/*.test.ts', '**/*.test.tsx', 'e2e/**/*.ts'],
    rules: {
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
    },
  },
  {
    // Plain JavaScript (bench, scripts, launchers) and tool configs outside every tsconfig have
    // no type information to check against.
    files: ['**/*.{js,mjs,cjs}', '**/vitest.config.ts', 'scripts/**'],
    ...tseslint.configs.disableTypeChecked,
  },
  {
    // CommonJS configs (dependency-cruiser's) share their paths with require().
    files: ['**/*.cjs'],
    languageOptions: { sourceType: 'commonjs' },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
  {
    // Protocol is the contract: it must never reach into apps or services.
    files: ['packages/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            '@freeloader/manager',
            '@freeloader/agent',
            '@freeloader/console',
            '**/apps/**',
            '**/services/**',
          ],
        },
      ],
    },
  },
  {
    // SQL lives in the manager's repositories/ (and db/): domain code calls repository
    // functions, so every statement on a table can be found in one folder.
    files: ['services/manager/src/**/*.ts'],
    ignores: [
      'services/manager/src/repositories/**',
      'services/manager/src/db/**',
      'services/manager/src/test/**',
      '**/*.test.ts',
    ],
    rules: {
      'no-restricted-syntax': [
        'error',
        {
          selector: "CallExpression[callee.property.name='query']",
          message: 'SQL lives in repositories/ (or db/): call a repository function instead.',
        },
      ],
    },
  },
  {
    // Job payloads are a discriminated union by kind (protocol JobView): handlers narrow, never cast.
    files: ['apps/agent/src/jobs/**/*.ts'],
    rules: {
      'no-restricted-syntax': [
        'error',
        {
          selector:
            "TSAsExpression[expression.type='TSAsExpression'][expression.typeAnnotation.type='TSUnknownKeyword']",
          message: 'Narrow the job by its kind instead of casting through unknown.',
        },
      ],
    },
  },
  {
    // The console and the agent's settings page run in browsers: React hook rules and browser
    // globals.
    files: ['apps/console/**/*.{ts,tsx}', 'apps/agent/settings-ui/**/*.{ts,tsx}'],
    ...reactHooks.configs.flat['recommended-latest'],
    languageOptions: { globals: { ...globals.browser } },
  },
);
