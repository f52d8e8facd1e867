// The sign-in page a server's AUTHENTICATION_REQUIRED answers point at (redirectURL).
// A user signs in with the password `fog user password` set; the new web auth token goes
// to the window that opened the page (postMessage {ckWebAuthToken}) and, when the address
// has ?callback=URL, the page goes to URL?ckWebAuthToken=TOKEN.

const $ = (id) => document.getElementById(id);

$("signin-form").addEventListener("submit", async (event) => {
  event.preventDefault();
  $("status").className = "";
  $("status").textContent = "Signing in…";
  let answer = {};
  let response;
  try {
    response = await fetch("/signin", {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ user: $("user").value, password: $("password").value }),
      cache: "no-store",
    });
    answer = await response.json();
  } catch (error) {
    answer = { reason: error.message };
  }
  if (!response || !response.ok || !answer.ckWebAuthToken) {
    $("status").className = "error";
    $("status").textContent = response && response.status === 401 ? "Wrong user name or password." : `Could not sign in: ${answer.reason}`;
    $("password").value = "";
    return;
  }
  const token = answer.ckWebAuthToken;
  $("status").textContent = "Signed in.";
  $("status").dataset.signedIn = "true";
  if (window.opener) window.opener.postMessage({ ckWebAuthToken: token }, "*");
  const callback = new URLSearchParams(location.search).get("callback");
  if (callback) {
    const url = new URL(callback, location.href);
    if (url.protocol !== "http:" && url.protocol !== "https:") return; // no javascript: or data: callbacks
    url.searchParams.set("ckWebAuthToken", token);
    location.assign(url.toString());
  }
});
