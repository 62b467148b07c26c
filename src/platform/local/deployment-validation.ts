// What the API server does to a Deployment before it is stored: the apps/v1 defaults
// (pkg/apis/apps/v1/defaults.go SetDefaults_Deployment) and the validation of its spec
// (pkg/apis/apps/validation/validation.go ValidateDeploymentSpec, ValidateDeploymentStrategy,
// ValidateRollingUpdateDeployment, ValidatePodTemplateSpecForReplicaSet), with the API's own
// words: `Deployment.apps "web" is invalid: <field>: Invalid value: 0: <detail>`.
import type { V1Deployment } from '@kubernetes/client-node';
import { canonicalJson } from './pod-template-hash.js';
import type { IntOrString } from './rolling-update.js';

/** SetDefaults_Deployment (+ the Pod template's restartPolicy), on a copy. */
export function withDeploymentDefaults(d: V1Deployment): V1Deployment {
  const copy = structuredClone(d);
  const spec = (copy.spec ??= { selector: {}, template: {} });
  spec.replicas ??= 1;
  spec.strategy ??= {};
  spec.strategy.type ??= 'RollingUpdate';
  if (spec.strategy.type === 'RollingUpdate') {
    spec.strategy.rollingUpdate ??= {};
    spec.strategy.rollingUpdate.maxUnavailable ??= '25%';
    spec.strategy.rollingUpdate.maxSurge ??= '25%';
  }
  spec.revisionHistoryLimit ??= 10;
  spec.progressDeadlineSeconds ??= 600;
  spec.minReadySeconds ??= 0;
  if (spec.template?.spec) {
    spec.template.spec.restartPolicy ??= 'Always';
    spec.template.spec.terminationGracePeriodSeconds ??= 30;
  }
  return copy;
}

/** One field.Error, printed as field.Error.Error() does. */
class FieldError {
  constructor(
    readonly field: string,
    readonly body: string,
  ) {}
  toString() {
    return `${this.field}: ${this.body}`;
  }
}

/** field.Error.ErrorBody's value printing: strings quoted, IntOrString by its String(). */
function printValue(value: string | number | boolean | Record<string, string> | undefined): string {
  if (value === undefined || value === null) return 'null';
  if (typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  // Go's %#v of a map[string]string, keys sorted.
  const entries = Object.entries(value).sort(([a], [b]) => a.localeCompare(b));
  return `map[string]string{${entries.map(([k, v]) => `${JSON.stringify(k)}:${JSON.stringify(v)}`).join(', ')}}`;
}

const invalid = (field: string, value: Parameters<typeof printValue>[0], detail: string) =>
  new FieldError(field, `Invalid value: ${printValue(value)}: ${detail}`);
/** An IntOrString's value prints through intstr.IntOrString.String(): 0 or 25%, unquoted. */
const invalidIntOrString = (field: string, value: IntOrString, detail: string) =>
  new FieldError(field, `Invalid value: ${String(value)}: ${detail}`);

/** apimachinery validation.IsValidPercent. */
const PERCENT = /^[0-9]+%$/;
const PERCENT_MESSAGE =
  "a valid percent string must be a numeric string followed by an ending '%' (e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')";

function nonNegative(field: string, value: number | undefined): FieldError[] {
  return value !== undefined && value < 0
    ? [invalid(field, value, 'must be greater than or equal to 0')]
    : [];
}

/** ValidatePositiveIntOrPercent. */
function positiveIntOrPercent(field: string, value: IntOrString): FieldError[] {
  if (typeof value === 'string')
    return PERCENT.test(value) ? [] : [invalidIntOrString(field, value, PERCENT_MESSAGE)];
  return nonNegative(field, value);
}

/** getIntOrPercentValue: the number of a valid percentage, else the integer (a bad string is 0). */
function intOrPercentNumber(value: IntOrString): number {
  if (typeof value === 'string') return PERCENT.test(value) ? Number(value.slice(0, -1)) : 0;
  return value;
}

/** ValidateRollingUpdateDeployment. */
export function validateRollingUpdate(
  maxUnavailable: IntOrString = 0,
  maxSurge: IntOrString = 0,
  path = 'spec.strategy.rollingUpdate',
): FieldError[] {
  const errors = [
    ...positiveIntOrPercent(`${path}.maxUnavailable`, maxUnavailable),
    ...positiveIntOrPercent(`${path}.maxSurge`, maxSurge),
  ];
  if (intOrPercentNumber(maxUnavailable) === 0 && intOrPercentNumber(maxSurge) === 0) {
    // "Both MaxSurge and MaxUnavailable cannot be zero."
    errors.push(
      invalidIntOrString(`${path}.maxUnavailable`, maxUnavailable, 'may not be 0 when `maxSurge` is 0'),
    );
  }
  if (
    typeof maxUnavailable === 'string' &&
    PERCENT.test(maxUnavailable) &&
    intOrPercentNumber(maxUnavailable) > 100
  )
    errors.push(
      invalidIntOrString(`${path}.maxUnavailable`, maxUnavailable, 'must not be greater than 100%'),
    );
  return errors;
}

/** ValidateDeploymentSpec for what the embedded runtime supports (matchLabels selectors). */
export function validateDeploymentSpec(d: V1Deployment): FieldError[] {
  const spec = d.spec;
  const errors: FieldError[] = [];
  errors.push(...nonNegative('spec.replicas', spec?.replicas));
  const selector = spec?.selector;
  if (!selector) errors.push(new FieldError('spec.selector', 'Required value'));
  else if (selector.matchExpressions?.length)
    errors.push(invalid('spec.selector', 'matchExpressions', 'not supported by the embedded runtime'));
  else if (Object.keys(selector.matchLabels ?? {}).length === 0)
    errors.push(
      invalid('spec.selector', selector.matchLabels ?? {}, 'empty selector is invalid for deployment'),
    );
  const labels = spec?.template?.metadata?.labels ?? {};
  if (selector?.matchLabels && Object.entries(selector.matchLabels).some(([k, v]) => labels[k] !== v))
    errors.push(
      invalid('spec.template.metadata.labels', labels, '`selector` does not match template `labels`'),
    );
  if (!spec?.template?.spec?.containers?.length)
    errors.push(new FieldError('spec.template.spec.containers', 'Required value'));
  const restartPolicy = spec?.template?.spec?.restartPolicy;
  if (restartPolicy !== undefined && restartPolicy !== 'Always')
    errors.push(
      new FieldError(
        'spec.template.spec.restartPolicy',
        `Unsupported value: ${JSON.stringify(restartPolicy)}: supported values: "Always"`,
      ),
    );
  const strategy = spec?.strategy;
  if (strategy?.type === 'Recreate') {
    if (strategy.rollingUpdate)
      errors.push(
        new FieldError(
          'spec.strategy.rollingUpdate',
          "Forbidden: may not be specified when strategy `type` is 'Recreate'",
        ),
      );
  } else if (strategy?.type === 'RollingUpdate') {
    errors.push(
      ...validateRollingUpdate(strategy.rollingUpdate?.maxUnavailable, strategy.rollingUpdate?.maxSurge),
    );
  } else {
    errors.push(
      new FieldError(
        'spec.strategy.type',
        `Unsupported value: ${JSON.stringify(strategy?.type ?? '')}: supported values: "Recreate", "RollingUpdate"`,
      ),
    );
  }
  errors.push(...nonNegative('spec.minReadySeconds', spec?.minReadySeconds));
  errors.push(...nonNegative('spec.revisionHistoryLimit', spec?.revisionHistoryLimit));
  if (spec?.progressDeadlineSeconds !== undefined) {
    errors.push(...nonNegative('spec.progressDeadlineSeconds', spec.progressDeadlineSeconds));
    if (spec.progressDeadlineSeconds <= (spec.minReadySeconds ?? 0))
      errors.push(
        invalid(
          'spec.progressDeadlineSeconds',
          spec.progressDeadlineSeconds,
          'must be greater than minReadySeconds',
        ),
      );
  }
  return errors;
}

/** Go's %#v of the *metav1.LabelSelector the API prints for an immutable selector (matchLabels only). */
function printLabelSelector(matchLabels: Record<string, string> | undefined): string {
  const labels = matchLabels === undefined ? 'map[string]string(nil)' : printValue(matchLabels);
  return `v1.LabelSelector{MatchLabels:${labels}, MatchExpressions:[]v1.LabelSelectorRequirement(nil)}`;
}

/**
 * The API server's 422 message for these errors (errors.NewInvalid): one error as is, several
 * as `[a, b]` (utilerrors.Aggregate); undefined when the spec is valid. With `old`, an update:
 * ValidateDeploymentUpdate also keeps `spec.selector` immutable (apps/v1).
 */
export function deploymentInvalidMessage(d: V1Deployment, old?: V1Deployment): string | undefined {
  const errors = validateDeploymentSpec(d);
  if (old && canonicalJson(old.spec?.selector ?? {}) !== canonicalJson(d.spec?.selector ?? {})) {
    errors.unshift(
      new FieldError(
        'spec.selector',
        `Invalid value: ${printLabelSelector(d.spec?.selector?.matchLabels)}: field is immutable`,
      ),
    );
  }
  if (errors.length === 0) return undefined;
  const list = errors.length === 1 ? String(errors[0]) : `[${errors.map(String).join(', ')}]`;
  return `Deployment.apps ${JSON.stringify(d.metadata?.name ?? '')} is invalid: ${list}`;
}
