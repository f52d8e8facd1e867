// The console's self-test: `/console/?selftest=FLOW&token=ADMINISTRATOR_TOKEN` drives the
// real console through a flow (typing into its inputs and clicking its buttons, against
// the real server) and writes each step and the outcome into #selftest, ending with
// "SELFTEST PASS" or "SELFTEST FAIL: …". The browser tests (ConsoleBrowserTests) read it
// from the DOM headless Chromium dumps. Flows:
//   console  administration and the act-as path: token, schema edit and deploy, roles,
//            zones, change feed, the public database as nobody
//   seed001  seed 001's content-management flow: the above, then the Communication records
//            (every field type, assets), queries, edits, deletes, subscriptions, change feed
//   signin   the sign-in page in a window of its own: a wrong password, the right one, the
//            token posted to the opener and handed to the callback, the token at work
//            (needs &user=, &password= and &apiToken=)

import { idle, addField } from "./console.js";
import { session } from "./api.js";

const $ = (id) => document.getElementById(id);
const out = () => $("selftest");
const log = (line) => { out().textContent += `${line}\n`; };
const statusText = () => $("status").textContent;
const failed = () => $("status").className === "error";

function check(condition, message) {
  if (!condition) throw new Error(message);
}

/// Sets an input's value as a user would (firing change).
function set(id, value) {
  const input = typeof id === "string" ? $(id) : id;
  input.value = value;
  input.dispatchEvent(new Event("change"));
}

async function click(id) {
  (typeof id === "string" ? $(id) : id).click();
  await idle();
}

async function step(name, action) {
  log(`- ${name}`);
  await action();
  await idle();
  check(!failed(), `${name}: ${statusText()}`);
}

async function refused(name, code, action) {
  log(`- ${name} (refused with ${code})`);
  await action();
  await idle();
  check(failed() && statusText().includes(code), `${name}: expected ${code}, status says "${statusText()}"`);
}

async function actAs(user, database) {
  set("database", database);
  await idle();
  set("act-as", user);
  await idle();
  check(session.actAs === user && session.database === database, `could not act as ${user || "nobody"} in ${database}`);
}

const rows = () => [...$("results").tBodies[0].rows];
const row = (recordName) => rows().find((r) => r.dataset.recordName === recordName);

const SCHEMA = `DEFINE SCHEMA
    CREATE ROLE Editor;
    RECORD TYPE Communication (
        title STRING QUERYABLE SEARCHABLE,
        content STRING,
        image ASSET,
        imageLabel STRING,
        actionTitle STRING,
        cancelTitle STRING,
        okayTitle STRING,
        description STRING,
        type STRING QUERYABLE,
        identifier INT64 QUERYABLE SORTABLE,
        version INT64 QUERYABLE,
        isCurrent INT64 QUERYABLE,
        GRANT READ TO "_world",
        GRANT READ, CREATE, WRITE TO Editor
    );
`;

async function administration(token) {
  await refused("a wrong administrator token opens nothing", "AUTHENTICATION_FAILED", async () => {
    set("token", "0".repeat(64));
    await click("connect");
  });
  check(!$("connect-form").hidden && $("panels").hidden, "the console opened with a wrong token");
  await step("open with the administrator token", async () => {
    set("token", token);
    await click("connect");
  });
  check(!$("panels").hidden, "the console did not open");
  check([...$("act-as").options].some((o) => o.value === "alice"), "alice is not in the act-as picker");

  await step("schema tab", () => click($("tabs").querySelector('[data-tab="schema"]')));
  await refused("a schema that does not parse", "BAD_REQUEST", async () => {
    set("schema-text", "DEFINE SCHEMA\n    RECORD TYPE Broken (title);\n");
    await click("save-schema");
  });
  check(/2:\d+:/.test(statusText()), `the parse error names no line and column: ${statusText()}`);
  await step("save the CMS schema to development", async () => {
    set("schema-text", SCHEMA);
    await click("save-schema");
  });
  check($("schema-text").value.includes("RECORD TYPE Communication"), "development's schema lacks Communication");
  check($("schema-text").value.includes("isCurrent"), "development's schema lacks isCurrent");
  await step("deploy to production", () => click("deploy-schema"));
  check($("schema-environment").value === "production" && $("schema-text").value.includes("RECORD TYPE Communication"),
    "production's schema lacks Communication after deploying");

  await step("roles tab", () => click($("tabs").querySelector('[data-tab="roles"]')));
  await step("make alice an Editor", async () => {
    set("role-name", "Editor");
    set("role-user", "alice");
    await click("add-member");
  });
  check(document.querySelector('#roles-list [data-role="Editor"] [data-member="alice"]'), "alice is not listed as an Editor");
}

async function zonesAndChanges() {
  await actAs("alice", "private");
  await step("zones tab", () => click($("tabs").querySelector('[data-tab="zones"]')));
  await step("create zone Drafts as alice", async () => {
    set("zone-name", "Drafts");
    await click("create-zone");
  });
  check(document.querySelector('#zones-list [data-zone="Drafts"]'), "zone Drafts is not listed");
  await step("changes tab", () => click($("tabs").querySelector('[data-tab="changes"]')));
  await step("Drafts' change feed", async () => {
    set("changes-zone", [...$("changes-zone").options].find((o) => o.textContent.startsWith("Drafts")).value);
    await click("fetch-changes");
  });
  check($("changes-token").textContent.length > 0, "the change feed gave no sync token");
  check($("changes-list").children.length === 0, "an empty zone has changes");
  await step("delete zone Drafts", () => click(document.querySelector('#zones-list [data-zone="Drafts"] .delete-zone')));
  check(!document.querySelector('#zones-list [data-zone="Drafts"]'), "zone Drafts is still listed");
}

async function publicAsNobody(expected) {
  await actAs("", "public");
  await step("records tab", () => click($("tabs").querySelector('[data-tab="records"]')));
  await step(`query Communication as nobody in public (${expected} records)`, async () => {
    set("query-type", "Communication");
    $("filters").replaceChildren();
    await click("run-query");
  });
  check(rows().length === expected, `nobody sees ${rows().length} Communication records, not ${expected}`);
  await refused("nobody cannot create a zone", "", async () => {
    await click($("tabs").querySelector('[data-tab="zones"]'));
    set("zone-name", "Sneaky");
    await click("create-zone");
  });
  await click($("tabs").querySelector('[data-tab="records"]'));
}

/// Fills a new field row of the editor.
function field(name, type, value) {
  const r = addField();
  set(r.querySelector(".field-name"), name);
  set(r.querySelector(".field-type"), type);
  if (value instanceof Array && value[0] instanceof File) {
    const transfer = new DataTransfer();
    for (const file of value) transfer.items.add(file);
    r.querySelector(".field-file").files = transfer.files;
  } else {
    set(r.querySelector(".field-value"), value);
  }
  return r;
}

const fieldRow = (name) => [...$("edit-fields").tBodies[0].rows].find((r) => r.querySelector(".field-name").value === name);
const png = (name) => new File([new Uint8Array([0x89, 0x50, 0x4e, 0x47, 13, 10, 26, 10, 1, 2, 3])], name, { type: "image/png" });

async function query(recordType, filter) {
  set("query-type", recordType);
  $("filters").replaceChildren();
  if (filter) $("add-filter").click();
  if (filter) {
    const f = $("filters").lastElementChild;
    set(f.querySelector(".filter-field"), filter[0]);
    set(f.querySelector(".filter-comparator"), filter[1]);
    set(f.querySelector(".filter-type"), filter[2]);
    set(f.querySelector(".filter-value"), filter[3]);
  }
  await click("run-query");
}

async function contentManagement() {
  await actAs("alice", "public");
  await step("records tab", () => click($("tabs").querySelector('[data-tab="records"]')));
  await step("alice writes the current communication", async () => {
    $("new-record").click();
    set("edit-type", "Communication");
    set("edit-name", "welcome-1");
    field("title", "STRING", "en=Welcome|es=Bienvenido");
    field("content", "STRING", "en=Thanks for using Conjugar.|es=Gracias por usar Conjugar.");
    field("image", "ASSETID", [png("pigeon.png")]);
    field("imageLabel", "STRING", "en=A pigeon|es=Una paloma");
    field("okayTitle", "STRING", "en=OK|es=Vale");
    field("type", "STRING", "information");
    field("identifier", "INT64", "1");
    field("version", "INT64", "0");
    field("isCurrent", "INT64", "1");
    await click("save-record");
  });
  const firstTag = $("edit-tag").textContent;
  check(firstTag.length > 0, "the saved record has no change tag");
  await step("query the current communication", () => query("Communication", ["isCurrent", "EQUALS", "INT64", "1"]));
  check(rows().length === 1 && row("welcome-1"), `the query found ${rows().length} records, not welcome-1`);
  check(row("welcome-1").querySelector(".fields").textContent.includes("image=asset 11 bytes"), "the image asset is not in the record");
  await step("edit it: a new title, no longer current", async () => {
    await click(row("welcome-1").querySelector(".edit-record"));
    set(fieldRow("title").querySelector(".field-value"), "en=Hello|es=Hola");
    set(fieldRow("isCurrent").querySelector(".field-value"), "0");
    await click("save-record");
  });
  check($("edit-tag").textContent !== firstTag, "the change tag did not change");
  await step("no current communication now", () => query("Communication", ["isCurrent", "EQUALS", "INT64", "1"]));
  check(rows().length === 0, "the edited record still matches isCurrent == 1");

  await actAs("bob", "public");
  await refused("bob (no role) cannot write communications", "", async () => {
    $("new-record").click();
    set("edit-type", "Communication");
    set("edit-name", "bobs");
    field("title", "STRING", "mine");
    await click("save-record");
  });
  await publicAsNobody(1);
  await step("nobody sees the new title", () => query("Communication", ["identifier", "EQUALS", "INT64", "1"]));
  check(row("welcome-1") && row("welcome-1").textContent.includes("en=Hello"), "nobody does not see the edited title");

  // Every field type, in a private zone of alice's, then its change feed.
  await actAs("alice", "private");
  await step("zone Samples", async () => {
    await click($("tabs").querySelector('[data-tab="zones"]'));
    set("zone-name", "Samples");
    await click("create-zone");
    await click($("tabs").querySelector('[data-tab="records"]'));
    set("zone", [...$("zone").options].find((o) => o.textContent.startsWith("Samples")).value);
    set("changes-zone", $("zone").value);
  });
  await step("a target record", async () => {
    $("new-record").click();
    set("edit-type", "Sample");
    set("edit-name", "target");
    field("name", "STRING", "target");
    await click("save-record");
  });
  await step("a record with every field type", async () => {
    $("new-record").click();
    set("edit-type", "Sample");
    set("edit-name", "all-types");
    field("s", "STRING", "héllo");
    field("i", "INT64", "-42");
    field("d", "DOUBLE", "2.5");
    field("t", "TIMESTAMP", "2021-03-07T12:00:00.000Z");
    field("b", "BYTES", btoa("bytes"));
    field("l", "LOCATION", "37.33,-122.03");
    field("r", "REFERENCE", "target");
    field("a", "ASSETID", [png("one.png")]);
    field("sl", "STRING_LIST", "a\nb");
    field("il", "INT64_LIST", "1\n2\n3");
    field("dl", "DOUBLE_LIST", "0.5\n1.5");
    field("tl", "TIMESTAMP_LIST", "2021-03-07T12:00:00.000Z\n2022-03-07T12:00:00.000Z");
    field("bl", "BYTES_LIST", `${btoa("x")}\n${btoa("y")}`);
    field("ll", "LOCATION_LIST", "1,2\n3,4");
    field("rl", "REFERENCE_LIST", "target");
    field("al", "ASSETID_LIST", [png("two.png"), png("three.png")]);
    await click("save-record");
  });
  const expected = {
    s: "héllo", i: "-42", d: "2.5", t: "2021-03-07T12:00:00.000Z", b: btoa("bytes"), l: "37.33,-122.03", r: "target",
    sl: "a\nb", il: "1\n2\n3", dl: "0.5\n1.5", tl: "2021-03-07T12:00:00.000Z\n2022-03-07T12:00:00.000Z",
    bl: `${btoa("x")}\n${btoa("y")}`, ll: "1,2\n3,4", rl: "target",
  };
  await step("read it back through a query", async () => {
    await query("Sample", ["recordName", "EQUALS", "REFERENCE", "all-types"]);
    await click(row("all-types").querySelector(".edit-record"));
  });
  for (const [name, text] of Object.entries(expected)) {
    const r = fieldRow(name);
    check(r, `field ${name} is missing`);
    check(r.querySelector(".field-value").value === text, `field ${name} reads "${r.querySelector(".field-value").value}", not "${text}"`);
  }
  check(fieldRow("a").textContent.includes("asset 11 bytes"), "asset field a is missing");
  check(fieldRow("al").textContent.includes("asset 11 bytes, asset 11 bytes") || fieldRow("al").textContent.includes("asset 11 bytes\nasset 11 bytes"), "asset list al is missing");

  await step("subscriptions: one on the zone, one on Sample records", async () => {
    await click($("tabs").querySelector('[data-tab="subscriptions"]'));
    set("subscription-id", "samples-zone");
    set("subscription-type", "zone");
    await click("create-subscription");
    set("subscription-id", "new-samples");
    set("subscription-type", "query");
    set("subscription-record-type", "Sample");
    await click("create-subscription");
  });
  check(document.querySelector('#subscriptions-list [data-subscription="samples-zone"]'), "the zone subscription is not listed");
  check(document.querySelector('#subscriptions-list [data-subscription="new-samples"]'), "the query subscription is not listed");
  await step("delete the query subscription", () => click(document.querySelector('#subscriptions-list [data-subscription="new-samples"] .delete-subscription')));
  check(!document.querySelector('#subscriptions-list [data-subscription="new-samples"]'), "the deleted subscription is still listed");

  await step("the zone's change feed", async () => {
    await click($("tabs").querySelector('[data-tab="changes"]'));
    await click("fetch-changes");
  });
  const changed = [...$("changes-list").children].map((li) => li.dataset.recordName).sort();
  check(changed.join(",") === "all-types,target", `the change feed lists ${changed.join(",")}`);
  await step("delete the record with every type", async () => {
    await click($("tabs").querySelector('[data-tab="records"]'));
    await click("delete-record");
  });
  check(!row("all-types"), "the deleted record is still in the results");
  await step("changes since the sync token", () => click("more-changes"));
  check([...$("changes-list").children].some((li) => li.textContent === "deleted all-types"), "the change feed does not show the delete");

  await actAs("alice", "public");
  await step("alice deletes the communication", async () => {
    await query("Communication", ["identifier", "EQUALS", "INT64", "1"]);
    await click(row("welcome-1").querySelector(".edit-record"));
    await click("delete-record");
    await query("Communication");
  });
  check(rows().length === 0, "the communication was not deleted");
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

async function until(what, condition, seconds = 20) {
  for (let i = 0; i < seconds * 20; i++) {
    const value = condition();
    if (value) return value;
    await sleep(50);
  }
  throw new Error(`timed out waiting for ${what}`);
}

/// The sign-in page in a window of its own, as a web app opens it from a 421's redirectURL.
async function signIn(parameters) {
  const user = parameters.get("user");
  const password = parameters.get("password");
  const apiToken = parameters.get("apiToken");
  const messages = [];
  window.addEventListener("message", (event) => messages.push(event.data));
  log("- open the sign-in page");
  const popup = window.open(`/signin?callback=${encodeURIComponent("/console/?signed-in")}`, "signin");
  check(popup, "the sign-in window did not open");
  const field = (id) => popup.document && popup.document.getElementById(id);
  await until("the sign-in page", () => popup.document.readyState === "complete" && field("user"));
  // Modules run after the page loads; give its script a moment to attach.
  await sleep(200);
  log("- a wrong password");
  field("user").value = user;
  field("password").value = `${password}-wrong`;
  field("signin").click();
  await until("the wrong-password message", () => field("status").textContent === "Wrong user name or password.");
  check(messages.length === 0, "a wrong password posted a token");
  log("- the right password");
  field("password").value = password;
  field("signin").click();
  const message = await until("the token from the sign-in window", () => messages.find((m) => m && m.ckWebAuthToken));
  const token = message.ckWebAuthToken;
  check(token.length >= 100, "the posted token is too short");
  log("- the callback gets the token");
  const landed = await until("the callback", () => {
    try {
      return popup.location.search.includes("ckWebAuthToken") && popup.location.href;
    } catch {
      return false;
    }
  });
  check(new URL(landed).searchParams.get("ckWebAuthToken") === token, "the callback's token is not the posted one");
  check(new URL(landed).searchParams.has("signed-in"), "the callback lost its own query");
  popup.close();
  log("- the token signs the user in");
  const container = (await (await fetch("/admin/1/containers", { headers: { "X-FogKit-Administrator-Token": parameters.get("token") } })).json()).containers[0];
  const response = await fetch(`/database/1/${container}/development/public/users/caller?ckAPIToken=${apiToken}&ckWebAuthToken=${encodeURIComponent(token)}`);
  const caller = await response.json();
  check(response.ok && caller.lookupInfo && caller.lookupInfo.emailAddress === `${user}@example.com`, `users/caller answered ${JSON.stringify(caller)}`);
}

export async function start(parameters) {
  out().hidden = false;
  const flow = parameters.get("selftest");
  const token = parameters.get("token") || "";
  history.replaceState(null, "", location.pathname); // the token leaves the address bar
  try {
    if (flow === "signin") {
      await signIn(parameters);
    } else if (flow === "console") {
      await administration(token);
      await zonesAndChanges();
      await publicAsNobody(0);
    } else if (flow === "seed001") {
      await administration(token);
      await zonesAndChanges();
      await contentManagement();
    } else {
      throw new Error(`no self-test flow ${flow}`);
    }
    log("SELFTEST PASS");
  } catch (error) {
    log(`SELFTEST FAIL: ${error.message}`);
  }
  document.title = "selftest done";
}
