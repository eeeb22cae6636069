// Unit specs live beside the code; end-to-end specs (real Redis, real HTTP) live in test/.
const moduleNameMapper = {
  '^@countersign/(contracts|authorization|platform|sdk)$': '<rootDir>/libs/$1/src',
  // The SDK shares single files of these (built together with it), and has an entry point per framework adapter.
  '^@countersign/(contracts|authorization|sdk)/(.+)$': '<rootDir>/libs/$1/src/$2',
  '^@countersign/tool-providers$': '<rootDir>/libs/tool-providers/src',
  '^@countersign/demo-infra$': '<rootDir>/libs/demo-infra/src',
  '^@countersign/call-ledger$': '<rootDir>/libs/call-ledger/src',
  '^@countersign/audit$': '<rootDir>/libs/audit/src',
  '^@countersign/shared-records$': '<rootDir>/libs/shared-records/src',
  '^@countersign/admission$': '<rootDir>/libs/admission/src',
  '^@countersign/policy$': '<rootDir>/libs/policy/src',
};
const transform = {
  '^.+\\.ts$': ['ts-jest', { tsconfig: 'tsconfig.json' }],
};
const common = {
  rootDir: __dirname,
  moduleFileExtensions: ['ts', 'js', 'json'],
  moduleNameMapper,
  transform,
  testEnvironment: 'node',
};

module.exports = {
  // Global: per-project testTimeout is ignored when projects are used.
  testTimeout: 60000,
  // Says once, after the summary, what to install when the browser tests were skipped for want of Chromium.
  reporters: ['default', '<rootDir>/test/support/missing-chromium-reporter.js'],
  projects: [
    {
      ...common,
      displayName: 'unit',
      testMatch: ['<rootDir>/apps/**/*.spec.ts', '<rootDir>/libs/**/*.spec.ts'],
    },
    {
      ...common,
      displayName: 'e2e',
      testMatch: ['<rootDir>/test/**/*.e2e-spec.ts'],
      // The CLI tests run the compiled CLI: compiled again first when its sources changed.
      globalSetup: '<rootDir>/test/support/compiled-cli.ts',
    },
  ],
};
