// The FogKit web console: administration of one FogServer. Every database operation goes
// through the Web Services endpoints as the user picked in "Act as" (FogKit's access
// policy applies to it as to that user's own requests); the schema, roles and the user
// directory go through the administration API. Both need the administrator token.

import { session, setToken, ws, admin, containers, uploadAssets } from "./api.js";
import { TYPES, isList, itemType, formatField, parseField, summary } from "./fields.js";

const $ = (id) => document.getElementById(id);
const COMPARATORS = [
  "EQUALS", "NOT_EQUALS", "LESS_THAN", "LESS_THAN_OR_EQUALS", "GREATER_THAN", "GREATER_THAN_OR_EQUALS",
  "BEGINS_WITH", "NOT_BEGINS_WITH", "CONTAINS_ALL_TOKENS", "CONTAINS_ANY_TOKENS", "IN", "NOT_IN", "NEAR",
  "LIST_CONTAINS", "NOT_LIST_CONTAINS", "LIST_CONTAINS_ANY", "NOT_LIST_CONTAINS_ANY", "LIST_MEMBER_BEGINS_WITH",
  "NOT_LIST_MEMBER_BEGINS_WITH", "LIST_CONTAINS_ALL", "NOT_LIST_CONTAINS_ALL",
];

// MARK: - Running actions

let pending = Promise.resolve();
/// Runs a UI action: one at a time, its error shown in the status line. `idle()` waits for
/// the actions started so far (the self-test uses it).
export function run(label, action) {
  pending = pending.then(async () => {
    status(`${label}…`);
    try {
      await action();
      status(`${label}: done`);
    } catch (error) {
      status(`${label}: ${error.message}`, true);
    }
  });
  return pending;
}
export const idle = () => pending;

function status(text, isError = false) {
  $("status").textContent = text;
  $("status").className = isError ? "error" : "";
}

function element(tag, properties = {}, ...children) {
  const node = document.createElement(tag);
  const { dataset, ...rest } = properties;
  Object.assign(node, rest);
  Object.assign(node.dataset, dataset || {});
  for (const child of children) node.append(child);
  return node;
}

function options(select, values, labels = values) {
  const previous = select.value;
  select.replaceChildren(...values.map((value, i) => element("option", { value, textContent: labels[i] })));
  if (values.includes(previous)) select.value = previous;
}

// MARK: - Connecting

async function connect() {
  setToken($("token").value.trim());
  const answer = await containers();
  options($("container"), answer.containers);
  session.container = $("container").value;
  $("connect-form").hidden = true;
  for (const id of ["pickers", "tabs", "panels"]) $(id).hidden = false;
  await loadUsers();
  await loadZones();
}

async function loadUsers() {
  const answer = await admin("users");
  const names = answer.users.map((user) => user.name);
  options($("act-as"), ["", ...names], ["nobody (public, read-only)", ...names]);
  options($("role-user"), names);
  session.actAs = $("act-as").value;
}

function pickersChanged() {
  session.container = $("container").value;
  session.environment = $("environment").value;
  session.database = $("database").value;
  session.actAs = $("act-as").value;
  run("Loading zones", async () => {
    await loadUsers();
    await loadZones();
  });
}

// MARK: - Zones

let zones = [];
const zoneLabel = (zone) => zone.zoneID.zoneName + (zone.zoneID.ownerRecordName ? ` (${zone.zoneID.ownerRecordName})` : "");

async function loadZones() {
  try {
    zones = (await ws("zones/list", undefined, "GET")).zones.filter((zone) => !zone.serverErrorCode);
  } catch (error) {
    zones = [];
    throw error;
  } finally {
    const names = zones.map((zone) => JSON.stringify(zone.zoneID));
    for (const select of document.querySelectorAll(".zone-picker")) options(select, names, zones.map(zoneLabel));
    $("zones-list").replaceChildren(
      ...zones.map((zone) => {
        const remove = element("button", { type: "button", textContent: "Delete", className: "delete-zone" });
        remove.addEventListener("click", () => run(`Deleting zone ${zone.zoneID.zoneName}`, () => modifyZone("delete", zone.zoneID)));
        return element("li", { dataset: { zone: zone.zoneID.zoneName } }, `${zoneLabel(zone)} `, remove);
      }),
    );
  }
}

async function modifyZone(operationType, zoneID) {
  const answer = await ws("zones/modify", { operations: [{ operationType, zone: { zoneID } }] });
  const failed = answer.zones.find((zone) => zone.serverErrorCode);
  if (failed) throw new Error(`${failed.serverErrorCode}: ${failed.reason}`);
  await loadZones();
}

const selectedZone = (select = $("zone")) => (select.value ? JSON.parse(select.value) : { zoneName: "_defaultZone" });

// MARK: - Query

let continuation = null;
let lastQuery = null;

function addFilter(field = "", comparator = "EQUALS", type = "STRING", value = "") {
  const row = element("div", { className: "filter" });
  const name = element("input", { className: "filter-field", placeholder: "field", value: field });
  const comparatorSelect = element("select", { className: "filter-comparator" });
  options(comparatorSelect, COMPARATORS);
  comparatorSelect.value = comparator;
  const typeSelect = element("select", { className: "filter-type" });
  options(typeSelect, TYPES.filter((t) => !t.startsWith("ASSETID")));
  typeSelect.value = type;
  const valueInput = element("input", { className: "filter-value", placeholder: "value", value });
  const remove = element("button", { type: "button", textContent: "✕" });
  remove.addEventListener("click", () => row.remove());
  row.append(name, comparatorSelect, typeSelect, valueInput, remove);
  $("filters").append(row);
  return row;
}

/// The query dictionary the builder describes.
export function builtQuery() {
  const query = { recordType: $("query-type").value.trim() };
  if (!query.recordType) throw new Error("give a record type");
  query.filterBy = [...document.querySelectorAll("#filters .filter")].map((row) => {
    const fieldName = row.querySelector(".filter-field").value.trim();
    const comparator = row.querySelector(".filter-comparator").value;
    const type = row.querySelector(".filter-type").value;
    const text = row.querySelector(".filter-value").value;
    const listValued = ["IN", "NOT_IN", "LIST_CONTAINS_ANY", "NOT_LIST_CONTAINS_ANY", "LIST_CONTAINS_ALL", "NOT_LIST_CONTAINS_ALL"].includes(comparator);
    const valueType = listValued && !isList(type) ? `${type}_LIST` : type;
    const fieldValue = parseField(valueType, listValued ? text.split(",").join("\n") : text, fieldName);
    const filter = { comparator, fieldValue };
    if (fieldName.startsWith("___") || ["recordName", "createdTimestamp", "modifiedTimestamp", "createdUserRecordName", "modifiedUserRecordName"].includes(fieldName)) {
      filter.systemFieldName = fieldName.replace(/^___/, "");
    } else {
      filter.fieldName = fieldName;
    }
    return filter;
  });
  const sort = $("sort-field").value.trim();
  if (sort) query.sortBy = [{ fieldName: sort, ascending: $("sort-ascending").checked }];
  return query;
}

async function runQuery(more) {
  const body = more ? { ...lastQuery, continuationMarker: continuation } : {
    zoneID: selectedZone(),
    query: builtQuery(),
    resultsLimit: Number($("results-limit").value) || 50,
  };
  lastQuery = { ...body, continuationMarker: undefined };
  const answer = await ws("records/query", body);
  continuation = answer.continuationMarker || null;
  $("more-results").disabled = !continuation;
  const rows = answer.records.map((record) => resultRow(record));
  if (more) $("results").tBodies[0].append(...rows);
  else $("results").tBodies[0].replaceChildren(...rows);
}

function resultRow(record) {
  if (record.serverErrorCode) {
    return element("tr", {}, element("td", { colSpan: 5, textContent: `${record.recordName || ""} ${record.serverErrorCode}: ${record.reason}` }));
  }
  const fields = Object.entries(record.fields || {}).map(([name, field]) => `${name}=${summary(field)}`).join("; ");
  const edit = element("button", { type: "button", textContent: "Edit", className: "edit-record" });
  edit.addEventListener("click", () => openRecord(record));
  const modified = record.modified ? new Date(record.modified.timestamp).toISOString() : "";
  return element("tr", { dataset: { recordName: record.recordName } },
    element("td", { textContent: record.recordName }), element("td", { textContent: record.recordType }),
    element("td", { textContent: fields, className: "fields" }), element("td", { textContent: modified }), element("td", {}, edit));
}

// MARK: - Record editor

let editing = null; // the record as fetched, or null for a new one

function openRecord(record) {
  editing = record;
  $("edit-name").value = record ? record.recordName : "";
  $("edit-name").disabled = !!record;
  $("edit-type").value = record ? record.recordType : $("query-type").value;
  $("edit-type").disabled = !!record;
  $("edit-tag").textContent = record ? record.recordChangeTag : "";
  $("edit-fields").tBodies[0].replaceChildren();
  for (const [name, field] of Object.entries(record ? record.fields || {} : {})) addField(name, field);
}

export function addField(name = "", field = { type: "STRING" }) {
  const row = element("tr", { className: "field" });
  const nameInput = element("input", { className: "field-name", value: name });
  const typeSelect = element("select", { className: "field-type" });
  options(typeSelect, TYPES);
  typeSelect.value = field.type || "STRING";
  const valueCell = element("td");
  row.existing = field; // the fetched value, for assets kept as they are
  const render = () => {
    const type = typeSelect.value;
    if (itemType(type) === "ASSETID") {
      const file = element("input", { type: "file", className: "field-file", multiple: isList(type) });
      const kept = field.type === type && field.value ? ` (keeps ${formatField(field)} unless a file is chosen)` : "";
      valueCell.replaceChildren(file, kept);
    } else {
      const text = field.type === type ? formatField(field) : "";
      const input = isList(type) || text.includes("\n")
        ? element("textarea", { className: "field-value", rows: 3, value: text })
        : element("input", { className: "field-value", value: text });
      valueCell.replaceChildren(input);
    }
  };
  typeSelect.addEventListener("change", render);
  render();
  const remove = element("button", { type: "button", textContent: "✕", className: "remove-field" });
  remove.addEventListener("click", () => row.remove());
  row.append(element("td", {}, nameInput), element("td", {}, typeSelect), valueCell, element("td", {}, remove));
  $("edit-fields").tBodies[0].append(row);
  return row;
}

async function editorFields(recordType, recordName, zoneID) {
  const fields = {};
  const kept = new Set();
  for (const row of $("edit-fields").tBodies[0].rows) {
    const name = row.querySelector(".field-name").value.trim();
    if (!name) continue;
    kept.add(name);
    const type = row.querySelector(".field-type").value;
    const file = row.querySelector(".field-file");
    if (file) {
      // No file chosen: an update leaves the asset as it is (update changes only the
      // fields it names); a create has none.
      if (file.files.length === 0) continue;
      const assets = await uploadAssets([...file.files], recordType, name, recordName, zoneID);
      fields[name] = { type, value: isList(type) ? assets : assets[0] };
    } else {
      const text = row.querySelector(".field-value").value;
      fields[name] = text === "" && !isList(type) ? {} : parseField(type, text, name);
    }
  }
  // Fields the fetched record had and the editor dropped are cleared.
  if (editing) for (const name of Object.keys(editing.fields || {})) if (!kept.has(name)) fields[name] = {};
  return fields;
}

async function saveRecord() {
  const zoneID = selectedZone();
  const recordType = $("edit-type").value.trim();
  if (!recordType) throw new Error("give the record type");
  const recordName = $("edit-name").value.trim() || (editing ? editing.recordName : crypto.randomUUID());
  const record = { recordName, recordType, fields: await editorFields(recordType, recordName, zoneID) };
  if (editing) record.recordChangeTag = editing.recordChangeTag;
  const answer = await ws("records/modify", {
    zoneID,
    operations: [{ operationType: editing ? "update" : "create", record }],
  });
  const saved = answer.records[0];
  if (saved.serverErrorCode) throw new Error(`${saved.serverErrorCode}: ${saved.reason}`);
  openRecord(saved);
}

async function deleteRecord() {
  if (!editing) throw new Error("open a record first");
  const answer = await ws("records/modify", {
    zoneID: selectedZone(),
    operations: [{ operationType: "delete", record: { recordName: editing.recordName, recordChangeTag: editing.recordChangeTag } }],
  });
  const result = answer.records[0];
  if (result.serverErrorCode) throw new Error(`${result.serverErrorCode}: ${result.reason}`);
  openRecord(null);
  const row = document.querySelector(`#results tr[data-record-name="${CSS.escape(result.recordName)}"]`);
  if (row) row.remove();
}

// MARK: - Schema and roles

async function loadSchema() {
  const answer = await admin("schema", undefined, "GET", $("schema-environment").value);
  $("schema-text").value = answer.schema;
}

async function saveSchema() {
  const answer = await admin("schema", { schema: $("schema-text").value }, "POST", "development");
  $("schema-environment").value = "development";
  $("schema-text").value = answer.schema;
  await loadRoles();
}

async function deploySchema() {
  const answer = await admin("schema/deploy", {}, "POST", "development");
  $("schema-environment").value = "production";
  $("schema-text").value = answer.schema;
}

function showRoles(roles) {
  options($("role-name"), roles.map((role) => role.name));
  $("roles-list").replaceChildren(...roles.map((role) => {
    const members = role.members.map((member) => {
      const remove = element("button", { type: "button", textContent: "Remove", className: "remove-member" });
      remove.addEventListener("click", () => run(`Removing ${member.name} from ${role.name}`, async () =>
        showRoles((await admin("roles/members", { operationType: "remove", role: role.name, user: member.name })).roles)));
      return element("li", { dataset: { member: member.name || member.userRecordName } }, `${member.name || member.userRecordName} `, remove);
    });
    return element("li", { dataset: { role: role.name } }, role.name, element("ul", {}, ...members));
  }));
}

async function loadRoles() {
  showRoles((await admin("roles")).roles);
}

async function addMember() {
  showRoles((await admin("roles/members", { operationType: "add", role: $("role-name").value, user: $("role-user").value })).roles);
}

// MARK: - Subscriptions

async function loadSubscriptions() {
  const answer = await ws("subscriptions/list", undefined, "GET");
  $("subscriptions-list").replaceChildren(...answer.subscriptions.map((subscription) => {
    if (subscription.serverErrorCode) return element("li", { textContent: `${subscription.subscriptionID}: ${subscription.serverErrorCode}` });
    const remove = element("button", { type: "button", textContent: "Delete", className: "delete-subscription" });
    remove.addEventListener("click", () => run(`Deleting subscription ${subscription.subscriptionID}`, async () => {
      await modifySubscription("delete", { subscriptionID: subscription.subscriptionID });
    }));
    const what = subscription.subscriptionType === "query" ? `query ${subscription.query?.recordType} on ${(subscription.firesOn || []).join(", ")}` : `zone ${subscription.zoneID?.zoneName}`;
    return element("li", { dataset: { subscription: subscription.subscriptionID } }, `${subscription.subscriptionID}: ${what} `, remove);
  }));
}

async function modifySubscription(operationType, subscription) {
  const answer = await ws("subscriptions/modify", { operations: [{ operationType, subscription }] });
  const failed = answer.subscriptions.find((item) => item.serverErrorCode);
  if (failed) throw new Error(`${failed.serverErrorCode}: ${failed.reason}`);
  await loadSubscriptions();
}

async function createSubscription() {
  const subscriptionType = $("subscription-type").value;
  const subscription = { subscriptionID: $("subscription-id").value.trim() || crypto.randomUUID(), subscriptionType, zoneID: selectedZone() };
  if (subscriptionType === "query") {
    subscription.query = { recordType: $("subscription-record-type").value.trim(), filterBy: [] };
    subscription.firesOn = [...document.querySelectorAll(".fires-on:checked")].map((box) => box.value);
  }
  const alert = $("subscription-alert").value;
  subscription.notificationInfo = alert ? { alertBody: alert, shouldSendContentAvailable: true } : { shouldSendContentAvailable: true };
  await modifySubscription("create", subscription);
}

// MARK: - Change feed

let syncToken = null;

async function fetchChanges(fromToken) {
  const zone = { zoneID: selectedZone($("changes-zone")) };
  if (fromToken && syncToken) zone.syncToken = syncToken;
  if (!fromToken) $("changes-list").replaceChildren();
  let more = true;
  while (more) {
    const answer = await ws("changes/zone", { zones: [zone], resultsLimit: 100 });
    const result = answer.zones[0];
    if (result.serverErrorCode) throw new Error(`${result.serverErrorCode}: ${result.reason}`);
    for (const record of result.records) {
      const text = record.deleted ? `deleted ${record.recordName}` : `${record.recordType} ${record.recordName} ${record.recordChangeTag}`;
      $("changes-list").append(element("li", { textContent: text, dataset: { recordName: record.recordName } }));
    }
    syncToken = result.syncToken;
    zone.syncToken = syncToken;
    more = !!result.moreComing;
  }
  $("changes-token").textContent = syncToken || "";
  $("more-changes").disabled = !syncToken;
}

// MARK: - Wiring

function showTab(name) {
  for (const panel of document.querySelectorAll(".panel")) panel.hidden = panel.id !== `tab-${name}`;
  for (const button of document.querySelectorAll("#tabs button")) button.classList.toggle("active", button.dataset.tab === name);
  const loaders = { zones: loadZones, schema: loadSchema, roles: loadRoles, subscriptions: loadSubscriptions };
  if (loaders[name]) run(`Loading ${name}`, loaders[name]);
}

function wire() {
  const click = (id, label, action) => $(id).addEventListener("click", () => run(label, action));
  $("connect-form").addEventListener("submit", (event) => {
    event.preventDefault();
    run("Opening", connect);
  });
  $("sign-out").addEventListener("click", () => {
    setToken("");
    location.reload();
  });
  for (const id of ["container", "environment", "database", "act-as"]) $(id).addEventListener("change", pickersChanged);
  for (const button of document.querySelectorAll("#tabs button")) button.addEventListener("click", () => showTab(button.dataset.tab));
  $("add-filter").addEventListener("click", () => addFilter());
  click("run-query", "Query", () => runQuery(false));
  click("more-results", "More results", () => runQuery(true));
  $("new-record").addEventListener("click", () => openRecord(null));
  $("add-field").addEventListener("click", () => addField());
  click("save-record", "Saving the record", saveRecord);
  click("delete-record", "Deleting the record", deleteRecord);
  click("create-zone", "Creating the zone", () => modifyZone("create", { zoneName: $("zone-name").value.trim() }));
  click("refresh-zones", "Loading zones", loadZones);
  click("load-schema", "Loading the schema", loadSchema);
  click("save-schema", "Saving the schema to development", saveSchema);
  click("deploy-schema", "Deploying the schema to production", deploySchema);
  click("add-member", "Adding the member", addMember);
  click("create-subscription", "Creating the subscription", createSubscription);
  click("refresh-subscriptions", "Loading subscriptions", loadSubscriptions);
  click("fetch-changes", "Fetching changes", () => fetchChanges(false));
  click("more-changes", "Fetching changes since the token", () => fetchChanges(true));
}

wire();
const parameters = new URLSearchParams(location.search);
if (parameters.has("selftest")) {
  import("./selftest.js").then((module) => module.start(parameters));
} else if (session.token) {
  $("token").value = session.token;
  run("Opening", connect);
}
