/** Environment variable names that look like they hold a secret (their values are redacted and never passed on). */

const SECRET_NAME_PATTERNS = [
  /API_KEY$/i,
  /_TOKEN$/i,
  /^TOKEN$/i,
  /SECRET/i,
  /PASSWORD/i,
  /PASSWD/i,
  /PRIVATE_KEY/i,
  /CREDENTIAL/i,
  /_ACCESS_KEY(_ID)?$/i,
];

export function looksLikeSecretName(name: string): boolean {
  return SECRET_NAME_PATTERNS.some((re) => re.test(name));
}
