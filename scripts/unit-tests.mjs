// The unit tests, for `npm run test:unit` (node scripts/run-tests.mjs --unit): pure logic — the
// conclusion, outcomes, schemas, the report model, the state machines, the layers — each file
// in about a second. They start no process (test/helpers/unit-guard.ts fails one that does);
// loopback sockets are allowed (outcome.test.ts reads real socket errors). Every other test
// file is an integration test. `npm test` runs both. A new pure test belongs on this list.
export const unitTests = [
  'test/architecture/constants-once.test.ts',
  'test/architecture/errors-thrown.test.ts',
  'test/architecture/layers.test.ts',
  'test/architecture/paths-exist.test.ts',
  'test/architecture/unit-tests.test.ts',
  'test/cli/errors-documented.test.ts',
  'test/cli/scenario-flags.test.ts',
  'test/experiment/advice.test.ts',
  'test/experiment/conclude.test.ts',
  'test/experiment/events.test.ts',
  'test/experiment/graded-evidence.test.ts',
  'test/experiment/outcome.test.ts',
  'test/experiment/place-event.test.ts',
  'test/experiment/schema-file.test.ts',
  'test/experiment/server-lines.test.ts',
  'test/platform/kube/connection.test.ts',
  'test/platform/kube/deploy.test.ts',
  'test/platform/local/endpointslice-controller.test.ts',
  'test/platform/local/pod-worker-state.test.ts',
  'test/platform/local/rolling-update.test.ts',
  'test/platform/local/service-proxy-routing.test.ts',
  'test/platform/local/store.test.ts',
  'test/probe/body.test.ts',
  'test/probe/resolv-conf.test.ts',
  'test/probe/work-template.test.ts',
  'test/report/html-page.test.ts',
  'test/report/html-timeline.test.ts',
  'test/report/run-view.test.ts',
  'test/report/sample-runs.test.ts',
  'test/report/unread-events.test.ts',
  'test/util/bounded-json.test.ts',
  'test/util/line-splitter.test.ts',
];
