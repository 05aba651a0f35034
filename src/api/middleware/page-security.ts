/**
 * The headers of every HTML page the API serves (the web app's and /docs). The pages load their
 * scripts, styles and fonts from this origin only, with no inline script or style; the app also
 * talks to Supabase Auth and shows figures through Storage's signed links, both on SUPABASE_URL.
 * Swagger UI's stylesheet draws its icons as data: images. No page may be framed (clickjacking),
 * and no address leaves in a Referer: /join/<token> holds an invitation.
 *
 * The same policy, without the Supabase origin, is in web/public/_headers for the page files the
 * static assets would serve at their own paths (/app.html, /docs/index.html).
 */
export function pageSecurityHeaders(supabaseUrl: string): Record<string, string> {
  const supabase = new URL(supabaseUrl).origin;
  const policy = [
    "default-src 'self'",
    `connect-src 'self' ${supabase}`,
    `img-src 'self' data: ${supabase}`,
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join('; ');
  return {
    'Content-Security-Policy': policy,
    'X-Content-Type-Options': 'nosniff',
    'Referrer-Policy': 'no-referrer',
    // frame-ancestors' forerunner, for browsers that predate it.
    'X-Frame-Options': 'DENY',
  };
}
