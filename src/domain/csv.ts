/** CSV exports (RFC 4180) as the API streams them: how one field is written. */

/**
 * A field is quoted when it holds a separator, a quote or a line break; one a spreadsheet would run as a
 * formula (=, +, -, @ first) is prefixed with ' so that opening the export runs nothing.
 */
export function csvField(value: string | number | boolean | null): string {
  if (value === null) return "";
  let text = String(value);
  if (typeof value === "string" && /^[=+\-@\t\r]/.test(text)) text = `'${text}`;
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

/** One CSV line of `fields`, CRLF-terminated. */
export function csvLine(fields: readonly (string | number | boolean | null)[]): string {
  return `${fields.map(csvField).join(",")}\r\n`;
}
