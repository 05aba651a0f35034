import { createHash, randomUUID } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { afterAll, expect, it } from 'vitest';
import { MIGRATIONS_DIR } from '../../devstack/postgres/migrate.ts';

const SHARE_LINKS = '20261123185417_share_links.sql';
const AUTH_SCHEMA = new URL('../../devstack/auth/schema.sql', import.meta.url).pathname;
const db = new PGlite();
afterAll(() => db.close());

// Links made before the hashing migration must keep working after it: the SQL hash has to be the API's.
it('hashes the existing tokens as the API does, keeps their prefix and drops the clear column', async () => {
  await db.exec(await readFile(AUTH_SCHEMA, 'utf8'));
  const files = (await readdir(MIGRATIONS_DIR)).filter((f) => f.endsWith('.sql')).sort();
  for (const file of files.filter((f) => f < SHARE_LINKS)) await db.exec(await readFile(join(MIGRATIONS_DIR, file), 'utf8'));

  const [user, collection, token] = [randomUUID(), randomUUID(), 'q3Zr_x-Abcdefghijklmnopqrstuvwxyz0123456789A'];
  await db.query('insert into auth.users (id, email) values ($1, $2)', [user, 'old@example.com']);
  await db.query('insert into collections (id, user_id, name) values ($1, $2, $3)', [collection, user, 'Old']);
  await db.query(
    `insert into collection_shares (collection_id, share_token, permission, created_by) values ($1, $2, 'query', $3)`,
    [collection, token, user],
  );

  await db.exec(await readFile(join(MIGRATIONS_DIR, SHARE_LINKS), 'utf8'));

  const { rows } = await db.query<Record<string, unknown>>('select * from collection_shares');
  expect(rows).toEqual([
    expect.objectContaining({
      token_hash: createHash('sha256').update(token, 'utf8').digest('hex'),
      token_prefix: 'q3Zr_x',
      expires_at: null,
      max_uses: null,
      uses: 0,
    }),
  ]);
  expect(rows[0]).not.toHaveProperty('share_token');
}, 60_000);
