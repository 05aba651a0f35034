import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** test/fixtures/docs, the sample documents (see its MANIFEST.tsv), with a trailing slash. */
export const DOCS_DIR = fileURLToPath(new URL('../fixtures/docs/', import.meta.url));

/** A sample document's bytes. */
export const fixture = (name: string) => new Uint8Array(readFileSync(`${DOCS_DIR}${name}`));
