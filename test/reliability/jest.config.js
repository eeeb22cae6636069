// The reliability suite (`npm run test:reliability`): faults, hostile input, load and Redis Cluster.
// Its own jest project so `npm test` stays fast; the specs spawn worker processes and their own Redis servers.
const base = require('../../jest.config.js');
const e2e = base.projects.find((p) => p.displayName === 'e2e');

module.exports = {
  testTimeout: 300000,
  projects: [
    {
      ...e2e,
      displayName: 'reliability',
      testMatch: ['<rootDir>/test/reliability/**/*.reliability-spec.ts'],
      setupFilesAfterEnv: ['<rootDir>/test/reliability/support/teardown.ts'],
    },
  ],
};
