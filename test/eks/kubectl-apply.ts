/**
 * What `kubectl apply` does to a custom resource (a type kubectl's scheme does not know, e.g. a ScaledObject), ported
 * line by line so that tests can replay an update:
 *
 * - kubernetes/kubectl v0.34.0 pkg/cmd/apply/patcher.go: `patchSimple` (117-201) falls back to
 *   `types.MergePatchType` when the type is not registered (the OpenAPI v3 strategic path is skipped for a CRD, whose
 *   PATCH does not accept application/strategic-merge-patch+json, 227-254); `buildMergePatch` (208-222) calls
 *   `jsonmergepatch.CreateThreeWayJSONMergePatch(original, modified, current)` with `original` the
 *   last-applied-configuration annotation (what `kubectl create --save-config` or the previous apply stored).
 * - kubernetes/apimachinery v0.34.0 pkg/util/jsonmergepatch/patch.go:31-88: additions and changes from
 *   current -> modified (nulls dropped), deletions from original -> modified (nulls only), merged; "Lists are always
 *   replaced in Json" (139-143).
 * - evanphx/json-patch v4 `CreateMergePatch` / `MergePatch`: RFC 7386 JSON merge patch.
 */
type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type JsonObject = { [key: string]: Json };

function isObject(v: Json | undefined): v is JsonObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function deepEqual(a: Json | undefined, b: Json | undefined): boolean {
  return JSON.stringify(sortKeys(a)) === JSON.stringify(sortKeys(b));
}

function sortKeys(v: Json | undefined): Json | undefined {
  if (Array.isArray(v)) return v.map((x) => sortKeys(x) as Json);
  if (!isObject(v)) return v;
  return Object.fromEntries(Object.keys(v).sort().map((k) => [k, sortKeys(v[k]) as Json]));
}

/** RFC 7386 patch that turns `from` into `to` (evanphx/json-patch CreateMergePatch): objects recurse, anything else is replaced whole. */
export function createMergePatch(from: JsonObject, to: JsonObject): JsonObject {
  const patch: JsonObject = {};
  for (const key of Object.keys(to)) {
    const a = from[key];
    const b = to[key];
    if (isObject(a) && isObject(b)) {
      const sub = createMergePatch(a, b);
      if (Object.keys(sub).length > 0) patch[key] = sub;
    } else if (!(key in from) || !deepEqual(a, b)) {
      patch[key] = b;
    }
  }
  for (const key of Object.keys(from)) if (!(key in to)) patch[key] = null;
  return patch;
}

/** apimachinery keepOrDeleteNullInObj: keep only the nulls (deletions) or drop them (additions and changes). */
function keepOrDeleteNull(m: JsonObject, keepNull: boolean): JsonObject {
  const out: JsonObject = {};
  for (const [key, val] of Object.entries(m)) {
    if (keepNull && val === null) {
      out[key] = null;
    } else if (isObject(val)) {
      if (Object.keys(val).length === 0) {
        if (!keepNull) out[key] = val;
        continue;
      }
      const sub = keepOrDeleteNull(val, keepNull);
      if (Object.keys(sub).length > 0) out[key] = sub;
    } else if (val !== null && !keepNull) {
      out[key] = val;
    }
  }
  return out;
}

/** RFC 7386 application of `patch` to `doc`: null deletes, objects merge, everything else (lists too) replaces. */
export function applyMergePatch(doc: JsonObject, patch: JsonObject): JsonObject {
  const out: JsonObject = { ...doc };
  for (const [key, val] of Object.entries(patch)) {
    if (val === null) delete out[key];
    else if (isObject(val)) out[key] = applyMergePatch(isObject(out[key]) ? out[key] : {}, val);
    else out[key] = val;
  }
  return out;
}

/** Merges two patches without conflicts (jsonpatch.MergePatch(deletePatch, addAndChangePatch)): nulls of the first stay. */
function mergePatches(first: JsonObject, second: JsonObject): JsonObject {
  const out: JsonObject = { ...first };
  for (const [key, val] of Object.entries(second)) {
    out[key] = isObject(val) && isObject(out[key]) ? mergePatches(out[key], val) : val;
  }
  return out;
}

/** jsonmergepatch.CreateThreeWayJSONMergePatch (without the conflict check, which the callers' data never trips). */
export function threeWayJsonMergePatch(original: JsonObject, modified: JsonObject, current: JsonObject): JsonObject {
  const addAndChange = keepOrDeleteNull(createMergePatch(current, modified), false);
  const deletions = keepOrDeleteNull(createMergePatch(original, modified), true);
  return mergePatches(deletions, addAndChange);
}

export const LAST_APPLIED = 'kubectl.kubernetes.io/last-applied-configuration';

/** The live object after `kubectl create --save-config` (aws-eks-v2 KubernetesManifest Create) and a controller's status. */
export function created(object: JsonObject, status: JsonObject = {}): JsonObject {
  const metadata = isObject(object.metadata) ? object.metadata : {};
  const annotations = isObject(metadata.annotations) ? metadata.annotations : {};
  return {
    ...object,
    metadata: { ...metadata, uid: 'uid-1', resourceVersion: '1', annotations: { ...annotations, [LAST_APPLIED]: JSON.stringify(object) } },
    status,
  };
}

/** `kubectl apply` of `modified` onto `live` (aws-eks-v2 KubernetesManifest Update), as patcher.go computes it for a CR. */
export function kubectlApply(live: JsonObject, modified: JsonObject): { patch: JsonObject; result: JsonObject } {
  const annotations = (live.metadata as JsonObject).annotations as JsonObject;
  const original = JSON.parse(annotations[LAST_APPLIED] as string) as JsonObject;
  // kubectl stores the new last-applied configuration in the modified object it diffs (util.GetModifiedConfiguration).
  const withAnnotation = applyMergePatch(modified, { metadata: { annotations: { [LAST_APPLIED]: JSON.stringify(modified) } } });
  const patch = threeWayJsonMergePatch(original, withAnnotation, live);
  return { patch, result: applyMergePatch(live, patch) };
}

/** `kubectl patch --type merge` (aws-eks-v2 KubernetesPatch): RFC 7386 onto the live object; last-applied untouched. */
export function kubectlMergePatch(live: JsonObject, patch: JsonObject): JsonObject {
  return applyMergePatch(live, patch);
}

export type { Json, JsonObject };
