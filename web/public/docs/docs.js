// The /docs page's one script of its own, in a file: the page's Content-Security-Policy allows no inline script.
// persistAuthorization stays off, so a token or API key pasted into "Authorize" is gone with the tab, never
// kept in localStorage. No validatorUrl: Swagger UI would otherwise load a badge from validator.swagger.io.
window.ui = SwaggerUIBundle({
  url: '/openapi.json',
  dom_id: '#docs',
  deepLinking: true,
  persistAuthorization: false,
  validatorUrl: null,
});
