import { describe, expect, it } from 'vitest';
import { ConfigSchema } from '../../src/api/config.ts';

const origins = ConfigSchema.shape.CORS_ORIGINS;

describe('CORS_ORIGINS', () => {
  it('is empty by default and a trimmed list of origins when set', () => {
    expect(origins.parse(undefined)).toEqual([]);
    expect(origins.parse('')).toEqual([]);
    expect(origins.parse(' https://app.example.com , http://localhost:5173,')).toEqual([
      'https://app.example.com',
      'http://localhost:5173',
    ]);
  });

  it('refuses what is not an origin, naming it', () => {
    for (const bad of ['https://app.example.com/', 'https://app.example.com/path', 'app.example.com', '*']) {
      const parsed = origins.safeParse(bad);
      expect(parsed.success, bad).toBe(false);
      expect(parsed.error?.issues[0]?.message).toContain(bad);
    }
  });
});
