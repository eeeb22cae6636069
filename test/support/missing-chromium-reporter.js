// Jest reporter: when browser tests were skipped because Chromium is missing (test/support/browser.ts), it says so
// once, after the summary, with what to install, instead of one launch failure per test.
'use strict';

const SKIPPED = 'needs Chromium, skipped: '; // the title prefix describeInChromium() gives a skipped suite

class MissingChromiumReporter {
  onRunComplete(_contexts, results) {
    let skipped = 0;
    const reasons = new Set();
    for (const file of results.testResults) {
      for (const test of file.testResults) {
        const suite = test.ancestorTitles[0] ?? '';
        if (test.status !== 'pending' || !suite.startsWith(SKIPPED)) continue;
        skipped++;
        reasons.add(suite.slice(SKIPPED.length));
      }
    }
    if (skipped === 0) return;
    process.stderr.write(`\n${skipped} browser test(s) skipped: ${[...reasons].join('; ')}\n\n`);
  }
}

module.exports = MissingChromiumReporter;
