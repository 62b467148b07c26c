// Labels and annotations draincheck puts on what it creates, so it can find (and delete)
// exactly its own objects — and nothing else — after an interrupted run.

export const MANAGED_BY_LABEL = 'app.kubernetes.io/managed-by';
export const MANAGED_BY_VALUE = 'draincheck';
export const NAME_LABEL = 'app.kubernetes.io/name';
export const COMPONENT_LABEL = 'app.kubernetes.io/component';
export const RUN_LABEL = 'draincheck.dev/run';
export const SCENARIO_LABEL = 'draincheck.dev/scenario';
/** Pod annotation set by the embedded runtime: "true" when the container runs as PID 1. */
export const PID1_ANNOTATION = 'draincheck.dev/pid1';
/**
 * A run's heartbeat (RFC 3339), renewed while it runs, on its namespace or (--namespace) its
 * Service: `draincheck cleanup` leaves runs with a fresh one alone.
 */
export const HEARTBEAT_ANNOTATION = 'draincheck.dev/heartbeat';
/** The label the EndpointSlice controller puts on a Service's slices. */
export const SERVICE_NAME_LABEL = 'kubernetes.io/service-name';
export const MANAGED_BY_SLICE_LABEL = 'endpointslice.kubernetes.io/managed-by';

export function managedLabels(runId: string, component: 'lab-server' | 'client'): Record<string, string> {
  return {
    [NAME_LABEL]: 'draincheck',
    [COMPONENT_LABEL]: component,
    [MANAGED_BY_LABEL]: MANAGED_BY_VALUE,
    [RUN_LABEL]: runId,
  };
}
