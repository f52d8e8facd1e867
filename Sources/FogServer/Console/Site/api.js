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

/// Uploads `files` for a record's asset field (one, or the items of an ASSETID_LIST), as
/// CloudKit JS does: one `assets/upload` call with a token a file for the upload URLs, then
/// each file's bytes to its URL. Answers the asset dictionaries records/modify takes.
export async function uploadAssets(files, recordType, fieldName, recordName, zoneID) {
  const tokens = files.map(() => (recordName ? { recordType, fieldName, recordName } : { recordType, fieldName }));
  const answer = await ws("assets/upload", { zoneID, tokens });
  const urls = (answer.tokens || []).map((token) => token.url);
  if (urls.length !== files.length || urls.some((url) => !url)) throw new Error("assets/upload gave no upload URL for every file");
  const assets = [];
  for (const [i, file] of files.entries()) {
    const response = await fetch(urls[i], { method: "POST", body: file, headers: { "Content-Type": "application/octet-stream" } });
    const json = await response.json().catch(() => ({}));
    if (!response.ok) throw new ServerError(response.status, json);
    if (!json.singleFile) throw new Error("the upload answered no singleFile");
    assets.push(json.singleFile);
  }
  return assets;
}
