// Lives in devstack/harness/, where bench/ and web/screenshots.ts may import it too (nothing outside test/ imports test/).
export * from '../../devstack/harness/hostile-pdfs.ts';
