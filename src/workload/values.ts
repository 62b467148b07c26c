// Every value a user gives that ends up in a manifest (and in the kubectl lines printed with
// it) is checked against Kubernetes' own grammar first: a newline in --image must never become
// a second YAML document, nor a name a broken object. One line, DC_USAGE (exit 2).
import { DraincheckError, quote } from '../errors.js';

// The reference grammar of distribution/reference (regexp.go), which container runtimes and
// the kubelet apply: [domain[:port]/]path[:tag][@digest].
const alphanumeric = '[a-z0-9]+';
const separator = '(?:[._]|__|[-]+)';
const pathComponent = `${alphanumeric}(?:${separator}${alphanumeric})*`;
const domainComponent = '(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])';
const host = `(?:${domainComponent}(?:\\.${domainComponent})*|\\[[a-fA-F0-9:]+\\])`;
const namePattern = `(?:${host}(?::[0-9]+)?/)?${pathComponent}(?:/${pathComponent})*`;
const tag = '[\\w][\\w.-]{0,127}';
const digest = '[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,}';
const IMAGE_REFERENCE = new RegExp(`^(${namePattern})(?::${tag})?(?:@${digest})?$`);
/** distribution/reference: NameTotalLengthMax. */
const IMAGE_NAME_MAX = 255;

/** RFC 1123 label: namespaces, Pod names (k8s.io/apimachinery validation.IsDNS1123Label). */
const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
/** RFC 1035 label: Service names must start with a letter (validation.IsDNS1035Label). */
const DNS1035_LABEL = /^[a-z]([-a-z0-9]*[a-z0-9])?$/;
const LABEL_MAX = 63;
/** The client Pod is named `<name>-client`: the name leaves room for the suffix. */
const CLIENT_SUFFIX = '-client';

/** Throws DC_USAGE unless `image` is a container image reference. */
export function checkImageReference(image: string, flag = '--image'): void {
  const match = IMAGE_REFERENCE.exec(image);
  if (!match || (match[1] ?? '').length > IMAGE_NAME_MAX) {
    throw new DraincheckError('DC_USAGE', `${flag} ${quote(image)} is not a container image reference`, {
      hint: 'e.g. draincheck:0.1.0 or registry.example.com:5000/team/draincheck:0.1.0@sha256:…',
    });
  }
}

/** Throws DC_USAGE unless `namespace` is a namespace name (a DNS-1123 label). */
export function checkNamespace(namespace: string, what = 'namespace'): void {
  if (namespace.length > LABEL_MAX || !DNS1123_LABEL.test(namespace)) {
    throw new DraincheckError(
      'DC_USAGE',
      `${what} ${quote(namespace)} must be a DNS label: at most ${LABEL_MAX} characters of a-z, 0-9 and -, starting and ending with a letter or digit`,
    );
  }
}

/** Throws DC_USAGE unless the workload's names are what the API server accepts for them. */
export function checkWorkloadNames(names: { runId: string; namespace: string; name: string }): void {
  checkNamespace(names.namespace);
  if (names.name.length > LABEL_MAX - CLIENT_SUFFIX.length || !DNS1035_LABEL.test(names.name)) {
    throw new DraincheckError(
      'DC_USAGE',
      `name ${quote(names.name)} must be a DNS label that starts with a letter (a Service name): at most ${LABEL_MAX - CLIENT_SUFFIX.length} characters of a-z, 0-9 and -`,
    );
  }
  if (names.runId.length > LABEL_MAX || !DNS1123_LABEL.test(names.runId)) {
    throw new DraincheckError(
      'DC_USAGE',
      `run id ${quote(names.runId)} must be a DNS label (a-z, 0-9, -; at most ${LABEL_MAX} characters)`,
    );
  }
}
