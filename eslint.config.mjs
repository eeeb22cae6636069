// Lint rules: typescript-eslint's recommended set; Prettier owns formatting.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['**/dist/**', 'node_modules/**', 'coverage/**', 'bin/**', '**/*.js', '**/*.mjs'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-console': 'error',
    },
  },
  {
    // The shared plumbing stays below the policy library: both services use it, the policy library uses neither.
    files: ['libs/platform/**'],
    rules: { 'no-restricted-imports': ['error', { paths: ['@countersign/authorization'] }] },
  },
  {
    files: ['**/*.spec.ts', 'test/**', 'bench/**', 'scripts/**', 'apps/**/cli/**'],
    rules: { 'no-console': 'off' },
  },
);
