import type { ApiKeys } from './access.ts';
import type { BucketStore } from './bucket-store.ts';
import type { Layout } from './layout.ts';
import type { ObjectStore } from './object-store.ts';
import type { UrlSigner } from './signing.ts';

/** What the route handlers share; built once per app by createStorageServer. */
export interface StorageDeps {
  keys: ApiKeys;
  layout: Layout;
  buckets: BucketStore;
  objects: ObjectStore;
  signer: UrlSigner;
  /** The global cap on one object's size; a bucket's own limit can only lower it. */
  uploadFileSizeLimit: number;
}
