// Field values of records as the console edits them: every Web Services type, each item
// written as one line of text (lists: one item per line), assets through file inputs.

export const TYPES = [
  "STRING", "INT64", "DOUBLE", "TIMESTAMP", "BYTES", "LOCATION", "REFERENCE", "ASSETID",
  "STRING_LIST", "INT64_LIST", "DOUBLE_LIST", "TIMESTAMP_LIST", "BYTES_LIST", "LOCATION_LIST",
  "REFERENCE_LIST", "ASSETID_LIST",
];

export const isList = (type) => type.endsWith("_LIST");
export const itemType = (type) => (isList(type) ? type.slice(0, -5) : type);

/// The text of one item of type `type` (a field value's JSON `value`, or a list's member).
export function formatItem(type, value) {
  if (value === null || value === undefined) return "";
  switch (type) {
    case "TIMESTAMP": return new Date(value).toISOString();
    case "LOCATION": return `${value.latitude},${value.longitude}`;
    case "REFERENCE": return value.recordName + (value.action && value.action !== "NONE" ? ` ${value.action}` : "");
    case "ASSETID": return `asset ${value.size ?? "?"} bytes`;
    default: return String(value);
  }
}

/// One item of type `type` from its text; throws with a message naming the field.
export function parseItem(type, text, field) {
  const fail = (what) => { throw new Error(`${field}: "${text}" is not ${what}`); };
  const t = text.trim();
  switch (type) {
    case "STRING": return text;
    case "INT64": {
      if (!/^[-+]?\d+$/.test(t)) fail("an integer");
      return Number(t);
    }
    case "DOUBLE": {
      const n = Number(t);
      if (t === "" || !Number.isFinite(n)) fail("a number");
      return n;
    }
    case "TIMESTAMP": {
      const ms = /^\d+$/.test(t) ? Number(t) : Date.parse(t);
      if (!Number.isFinite(ms)) fail("a date (ISO 8601 or milliseconds)");
      return ms;
    }
    case "BYTES": {
      try { atob(t); } catch { fail("base64"); }
      return t;
    }
    case "LOCATION": {
      const parts = t.split(",").map((p) => Number(p.trim()));
      if (parts.length !== 2 || !parts.every(Number.isFinite)) fail("latitude,longitude");
      return { latitude: parts[0], longitude: parts[1] };
    }
    case "REFERENCE": {
      const [recordName, action] = t.split(/\s+/);
      if (!recordName) fail("a record name");
      return { recordName, action: action || "NONE" };
    }
    default: fail(`a ${type} value`);
  }
}

/// The editor's text of a field value `{type, value}`.
export function formatField(field) {
  if (!field || field.value === undefined || field.value === null) return "";
  const type = field.type || "STRING";
  if (isList(type)) return field.value.map((item) => formatItem(itemType(type), item)).join("\n");
  return formatItem(type, field.value);
}

/// A field value `{type, value}` from the editor's text (not for assets).
export function parseField(type, text, field) {
  if (isList(type)) {
    const lines = text.split("\n").filter((line) => line.trim() !== "");
    return { type, value: lines.map((line) => parseItem(itemType(type), line, field)) };
  }
  return { type, value: parseItem(type, text, field) };
}

/// A short text of a field value for the results table.
export function summary(field) {
  const text = formatField(field).replaceAll("\n", ", ");
  return text.length > 60 ? `${text.slice(0, 57)}…` : text;
}
