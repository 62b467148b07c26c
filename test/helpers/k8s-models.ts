// Checks a plain object against @kubernetes/client-node's model type maps — the generated
// classes' attributeTypeMap, which mirrors the Kubernetes OpenAPI schema: every field must be
// one the schema defines (a typo is an error, as with `kubectl apply --validate=strict`) and
// hold the type it declares. Required fields are the TypeScript types' job (tsc checks them).
import * as k8s from '@kubernetes/client-node';

interface Attribute {
  name: string;
  baseName: string;
  type: string;
}
type Model = { getAttributeTypeMap(): Attribute[] };

const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;

export function modelErrors(value: unknown, type: string, path = '$'): string[] {
  if (value === undefined || value === null) return [];
  const array = /^Array<(.+)>$/.exec(type);
  if (array?.[1]) {
    if (!Array.isArray(value)) return [`${path}: expected an array (${type})`];
    return value.flatMap((v, i) => modelErrors(v, array[1] as string, `${path}[${i}]`));
  }
  const map = /^\{ \[key: string\]: (.+); \}$/.exec(type);
  if (map?.[1]) {
    if (typeof value !== 'object' || Array.isArray(value)) return [`${path}: expected a map (${type})`];
    return Object.entries(value).flatMap(([k, v]) => modelErrors(v, map[1] as string, `${path}.${k}`));
  }
  switch (type) {
    case 'string':
      return typeof value === 'string' ? [] : [`${path}: expected a string, got ${JSON.stringify(value)}`];
    case 'number':
      return typeof value === 'number' ? [] : [`${path}: expected a number, got ${JSON.stringify(value)}`];
    case 'boolean':
      return typeof value === 'boolean' ? [] : [`${path}: expected a boolean, got ${JSON.stringify(value)}`];
    case 'IntOrString':
      return typeof value === 'string' || Number.isInteger(value)
        ? []
        : [`${path}: expected an int or a string`];
    case 'Date':
      return typeof value === 'string' && RFC3339.test(value) ? [] : [`${path}: expected an RFC 3339 time`];
    case 'any':
    case 'object':
      return [];
  }
  const model = (k8s as unknown as Record<string, Model | undefined>)[type];
  if (!model?.getAttributeTypeMap) return [`${path}: unknown model type ${type}`];
  if (typeof value !== 'object' || Array.isArray(value)) return [`${path}: expected an object (${type})`];
  const attributes = new Map(model.getAttributeTypeMap().map((a) => [a.baseName, a]));
  return Object.entries(value).flatMap(([key, v]) => {
    const attribute = attributes.get(key);
    if (!attribute) return [`${path}.${key}: not a field of ${type}`];
    return modelErrors(v, attribute.type, `${path}.${key}`);
  });
}

/** The model class for an object's apiVersion/kind, as in a manifest. */
export function modelFor(object: { apiVersion?: string; kind?: string }): string {
  const version = (object.apiVersion ?? '').split('/').pop() ?? '';
  const name = `${version.charAt(0).toUpperCase()}${version.slice(1)}${object.kind ?? ''}`;
  return name;
}
