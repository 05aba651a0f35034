import { describe, expect, it } from 'vitest';
import { MAX_DOCUMENT_BYTES } from '#core/limits.ts';
import { declaredBuckets, parseSize } from '../../devstack/buckets.ts';

describe('buckets declared in supabase/config.toml', () => {
  it('declares the private documents bucket with the product’s upload limit', () => {
    const config = new URL('../../supabase/config.toml', import.meta.url).pathname;
    expect(declaredBuckets(config)).toEqual([{ id: 'documents', public: false, fileSizeLimit: MAX_DOCUMENT_BYTES }]);
  });

  it.each([
    ['50MiB', 50 * 1024 * 1024],
    ['5GB', 5e9],
    ['512', 512],
    [1024, 1024],
  ])('reads the size %s as the Supabase CLI does', (value, bytes) => {
    expect(parseSize(value)).toBe(bytes);
  });

  it('refuses a size it cannot read', () => {
    expect(() => parseSize('fifty megs')).toThrow(/cannot read the size/);
  });
});
