// The console's connection to the server: the administrator token (kept in
// sessionStorage), the container, environment, database and the user it acts as.
// Database operations go to the Web Services endpoints every client uses, acting as
// that user; administration goes to /admin/1/….

export const session = {
  token: sessionStorage.getItem("fogkit.administratorToken") || "",
  container: "",
  environment: "development",
  database: "public",
  actAs: "", // a user name of the directory; "" is nobody
};

export function setToken(token) {
  session.token = token;
  if (token) sessionStorage.setItem("fogkit.administratorToken", token);
  else sessionStorage.removeItem("fogkit.administratorToken");
}

/// An error answer: CloudKit's `{serverErrorCode, reason}`.
export class ServerError extends Error {
  constructor(status, body) {
    super(`${body.serverErrorCode || status}: ${body.reason || "no reason given"}`);
    this.status = status;
    this.code = body.serverErrorCode || String(status);
    this.body = body;
  }
}

function headers() {
  const result = { "Content-Type": "application/json", "X-FogKit-Administrator-Token": session.token };
  if (session.actAs) result["X-FogKit-Act-As"] = session.actAs;
  return result;
}

async function send(method, url, body) {
  const response = await fetch(url, {
    method,
    headers: headers(),
    body: body === undefined ? undefined : JSON.stringify(body),
    cache: "no-store",
  });
  let json = {};
  try {
    json = await response.json();
  } catch {
    json = { reason: `HTTP ${response.status}, not JSON` };
  }
  if (!response.ok) throw new ServerError(response.status, json);
  return json;
}

const enc = encodeURIComponent;

/// A Web Services call in the chosen database, as the chosen user.
export function ws(endpoint, body, method = "POST") {
  const url = `/database/1/${enc(session.container)}/${session.environment}/${session.database}/${endpoint}`;
  return send(method, url, body);
}

/// An administration call; `environment` defaults to the chosen one.
export function admin(path, body, method = body === undefined ? "GET" : "POST", environment = session.environment) {
  return send(method, `/admin/1/${enc(session.container)}/${environment}/${path}`, body);
}

export function containers() {
  return send("GET", "/admin/1/containers");
}

/// Uploads `file` for a record's asset field: `assets/upload` for a URL, then the bytes to
/// it. Answers the asset dictionary records/modify takes.
export async function uploadAsset(file, recordType, fieldName, recordName, zoneID) {
  const token = { recordType, fieldName };
  if (recordName) token.recordName = recordName;
  const answer = await ws("assets/upload", { zoneID, tokens: [token] });
  const url = answer.tokens && answer.tokens[0] && answer.tokens[0].url;
  if (!url) throw new Error("assets/upload gave no upload URL");
  const response = await fetch(url, { method: "POST", body: file, headers: { "Content-Type": "application/octet-stream" } });
  const json = await response.json().catch(() => ({}));
  if (!response.ok) throw new ServerError(response.status, json);
  if (!json.singleFile) throw new Error("the upload answered no singleFile");
  return json.singleFile;
}
