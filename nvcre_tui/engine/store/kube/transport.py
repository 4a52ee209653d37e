"""One HTTP connection pool to the API server, over kubernetes-asyncio's ApiClient (auth, TLS, token refresh).

Every request goes through `request` (JSON in, JSON out, retried on transient errors) or `open_stream`
(a watch: the response is handed back unread, to be consumed line by line).
"""

from __future__ import annotations

import ipaddress
import os
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

import aiohttp
from aiohttp.helpers import get_env_proxy_for_url
from yarl import URL

from ..errors import AlreadyExists, Forbidden, NoCredentials, NotFound, NotKubernetes, RetryableError, StoreError, Timeout, TooManyRequests, Unauthorized, Unavailable
from .answers import Subject, api_versions_problem, error_from_answer, is_status, object_from_answer
from .certfiles import CertificateFiles
from .client import ApiClient, ConfigException, Configuration
from .lost import lost_because
from .pools import Pool, Pools
from .retry import RequestStats, RetryPolicy
from .tlsprobe import speaks_tls

__all__ = ["Transport", "NotSent", "JSON", "MERGE_PATCH", "APPLY_PATCH"]

JSON = "application/json"
API_ROOT = "/api"  # the core group's versions: every Kubernetes API server answers it (discovery is open to all users)
MERGE_PATCH = "application/merge-patch+json"
APPLY_PATCH = "application/apply-patch+yaml"  # JSON is YAML: the body is sent as JSON
Query = Sequence[tuple[str, str]]


# A server that has never answered this process gets this long per try, and this many tries: one that accepts
# connections and never answers (a wrong port behind a load balancer, a hung apiserver) is one line in about 20 s,
# not six tries of 30 s (kubectl gives a TLS handshake 10 s). Once it has answered, a silence is transient.
FIRST_ANSWER_TIMEOUT = 10.0
FIRST_ANSWER_TRIES = 2


class NotSent(Unavailable):
    """No connection could be made: the request never reached the server (always safe to retry)."""


def _surely_not_applied(error: RetryableError) -> bool:
    # 429 is refused before any work (priority and fairness, max-inflight); a refused connection
    # never carried the request. A 5xx, a timeout or a reset may come after the write was committed.
    return isinstance(error, (TooManyRequests, NotSent))


def _reach_as_kubectl(client: ApiClient, configuration: Configuration) -> None:
    """The proxy, and no other credentials than the kubeconfig's, as kubectl decides them. The library's aiohttp session
    trusted the environment, so it read ~/.netrc (a `default` entry, or one for the server's host, gave every request
    Basic credentials beside the token: "Cannot combine AUTHORIZATION header ...", an internal error, exit 70; without a
    token they went to the API server), and it took $HTTPS_PROXY for a loopback server too (kind, minikube, a
    port-forward), which Go never proxies."""
    rest = client.rest_client
    rest.pool_manager._trust_env = False  # no netrc, and no proxy but the one chosen here (aiohttp: no public switch after creation)
    proxy = str(configuration.proxy) if configuration.proxy else _environment_proxy(URL(str(configuration.host)))
    rest.proxy = proxy or ""  # none: direct


def _environment_proxy(server: URL) -> str | None:
    """$HTTPS_PROXY (or $HTTP_PROXY for http://) for `server`, $NO_PROXY honoured, as Go's ProxyFromEnvironment reads
    them: never for localhost or a loopback address, nor for an address in a $NO_PROXY range (10.0.0.0/8), which
    Python's rules (names and suffixes only) proxied."""
    host = server.host or ""
    try:
        address = ipaddress.ip_address(host)
    except ValueError:  # a name
        address = None
    if host == "localhost" or (address is not None and (address.is_loopback or _in_no_proxy_range(address))):
        return None
    try:
        proxy, auth = get_env_proxy_for_url(server)
    except LookupError:  # none set, or $NO_PROXY names the server
        return None
    return str(proxy.with_user(auth.login).with_password(auth.password) if auth is not None else proxy)


def _in_no_proxy_range(address: ipaddress.IPv4Address | ipaddress.IPv6Address) -> bool:
    for entry in (os.environ.get("NO_PROXY") or os.environ.get("no_proxy") or "").split(","):
        try:
            if "/" in entry and address in ipaddress.ip_network(entry.strip(), strict=False):
                return True
        except ValueError:  # not a range: a name, for Python's rules
            continue
    return False


class Transport:
    """The store's only ApiClient, created on first use (inside the event loop) and closed by `close`."""

    def __init__(self, configuration: Configuration, user_agent: str, retry: RetryPolicy, stats: RequestStats,
                 request_timeout: float, *, without_credentials: str | None = None, compression: bool = True,
                 renew_credentials: Callable[[str, str | None], Awaitable[bool]] | None = None,
                 refresh_certificate: Callable[[], Awaitable[None]] | None = None,
                 certificate_files: CertificateFiles | None = None) -> None:
        self._configuration = configuration
        self._without_credentials = without_credentials  # KubeTarget.without_credentials: a 401 then says so
        self._renew_credentials = renew_credentials  # KubeTarget.renew_credentials: a 401 runs the exec plugin again
        self._refresh_certificate = refresh_certificate  # KubeTarget.refresh_certificate: before each request
        # the kubeconfig's disable-compression: true, as kubectl honours it (a fast network, lists too large to gzip)
        self._encoding = {} if compression else {"Accept-Encoding": "identity"}
        self._user_agent = user_agent
        self._pools = Pools(self._new_client, lambda: self._configuration.cert_file, certificate_files)
        self.retry = retry
        self.stats = stats
        self.request_timeout = request_timeout
        self.closed = False
        self.answered = False  # the server has answered (any HTTP status) since this transport was made
        self._speaks_tls: bool | None = None  # an http:// server that dropped the first request speaks TLS (None: not asked)
        self.kubernetes = False  # its /api answered as a Kubernetes API server's does (checked after a bare 404)
        self._streams: dict[aiohttp.ClientResponse, Pool] = {}

    def _new_client(self) -> ApiClient:
        client = ApiClient(self._configuration)
        client.user_agent = self._user_agent
        _reach_as_kubectl(client, self._configuration)
        return client

    def _proxy(self) -> str:
        """The proxy the client speaks through ("" none)."""
        return str(self._pools.current.client.rest_client.proxy or "") if self._pools.current is not None else ""

    async def _pool(self, subject: Subject) -> Pool:
        """The pool a request goes out on (given back once its answer is read). An exec plugin's client certificate past
        its expirationTimestamp is renewed first, and the request then goes out on connections presenting the new one
        (Pools): a kept-alive connection presents the certificate of its handshake, refused once it expires."""
        if self.closed:
            raise Unavailable("the store is closed")
        if self._refresh_certificate is not None:
            try:
                await self._refresh_certificate()
            except ConfigException as error:
                raise self._no_credentials(error, subject) from None
        return await self._pools.take()

    async def _send(self, method: str, path: str, query: Query, body: Any, content_type: str,
                    timeout: aiohttp.ClientTimeout, subject: Subject) -> tuple[aiohttp.ClientResponse, Pool]:
        """One HTTP exchange up to the response headers, and the pool it went out on (to give back once its answer is
        read); transport failures become store errors. `stats` keeps since when the server has given no answer at all
        (any HTTP answer ends it): the console says it shows stale state."""
        pool = await self._pool(subject)
        try:
            response = await self._exchange(pool.client, method, path, query, body, content_type, timeout, subject)
        except (Timeout, NotSent, Unavailable):
            self._pools.give_back(pool)
            if self.stats.unreachable_since is None:
                self.stats.unreachable_since = time.time()
            raise
        except BaseException:
            self._pools.give_back(pool)
            raise
        self.stats.unreachable_since = None
        self.stats.uncredentialed_since = None
        self.answered = True
        return response, pool

    async def _exchange(self, client: ApiClient, method: str, path: str, query: Query, body: Any, content_type: str,
                        timeout: aiohttp.ClientTimeout, subject: Subject) -> aiohttp.ClientResponse:
        try:
            response: aiohttp.ClientResponse = await client.call_api(
                path, method, query_params=list(query), header_params={"Accept": JSON, "Content-Type": content_type, **self._encoding},
                body=body, auth_settings=["BearerToken"], _preload_content=False, _request_timeout=timeout)
        except TimeoutError:
            raise Timeout.about(subject.kind, subject.name, subject.namespace,
                                f"{method} {path}: no answer within {timeout.total or timeout.sock_read}s") from None
        except (aiohttp.ClientSSLError, aiohttp.ClientConnectorCertificateError) as error:
            # Not transient: retrying will not make the certificate (or the CA we trust) right.
            raise StoreError.about(subject.kind, subject.name, subject.namespace,
                                   f"TLS with {self._configuration.host} failed: {error}") from None
        except aiohttp.ClientConnectorError as error:
            # through the kubeconfig's proxy-url, the address that refused is the proxy's: said, or it reads as the server's
            proxy = self._proxy()
            through = f" through proxy {URL(proxy).with_user(None)}" if proxy else ""
            raise NotSent.about(subject.kind, subject.name, subject.namespace,
                                f"cannot connect to {self._configuration.host}{through}: {error.os_error}") from None
        except (aiohttp.ClientConnectionError, aiohttp.ClientPayloadError) as error:
            raise Unavailable.about(subject.kind, subject.name, subject.namespace,
                                    f"{method} {path}: connection lost ({lost_because(error)}){await self._maybe_https()}") from None
        except ConfigException as error:  # a credential plugin failed while refreshing: not RBAC's refusal, nor the server's
            raise self._no_credentials(error, subject) from None
        return response

    def _no_credentials(self, error: ConfigException, subject: Subject) -> StoreError:
        problem = f"no credentials for {self._configuration.host}: {' '.join(str(error).split())}"
        if self.stats.uncredentialed_since is None:
            self.stats.uncredentialed_since = time.time()
        self.stats.credentials_problem = problem
        return NoCredentials.about(subject.kind, subject.name, subject.namespace, problem)

    async def _renewed(self, response: aiohttp.ClientResponse, pool: Pool, subject: Subject) -> bool:
        """After a 401: whether the exec plugin, run again, gave a credential other than the one refused (its token, or
        the client certificate the request's pool presented), for one more try (client-go refreshes on a 401; a 401 is
        answered before anything is done, so any request may be sent again)."""
        if response.status != 401 or self._renew_credentials is None:
            return False
        try:
            return await self._renew_credentials(response.request_info.headers.get("Authorization", ""), pool.certificate)
        except ConfigException as error:
            raise self._no_credentials(error, subject) from None

    async def _maybe_https(self) -> str:
        """Where a connection dropped before any answer over http:// is an HTTPS server's (every API server listens on
        TLS) closing the plain request at its handshake: said only then (a TLS handshake with it succeeds, asked once),
        not for a plain server that reset it (restarting), nor through a proxy (the drop may be the proxy's)."""
        host = str(self._configuration.host)
        if self.answered or not host.lower().startswith("http://") or self._proxy():
            return ""
        if self._speaks_tls is None:
            self._speaks_tls = await speaks_tls(host)
        if not self._speaks_tls:
            return ""
        return (f"; the server speaks HTTPS (it completes a TLS handshake): use https:// in the kubeconfig's server "
                f"({self._configuration.host}: API servers listen on https://)")

    async def _once(self, method: str, path: str, query: Query, body: Any, content_type: str,
                    subject: Subject, *, renew: bool = True) -> dict[str, Any]:
        patience = self.request_timeout if self.answered else min(self.request_timeout, FIRST_ANSWER_TIMEOUT)
        timeout = aiohttp.ClientTimeout(total=patience)
        response, pool = await self._send(method, path, query, body, content_type, timeout, subject)
        try:
            data = await response.read()
        except TimeoutError:
            raise Timeout.about(subject.kind, subject.name, subject.namespace,
                                f"{method} {path}: answer not complete within {patience}s") from None
        except (aiohttp.ClientConnectionError, aiohttp.ClientPayloadError) as error:
            raise Unavailable.about(subject.kind, subject.name, subject.namespace,
                                    f"{method} {path}: connection lost while reading ({lost_because(error)})") from None
        finally:
            response.release()
            self._pools.give_back(pool)
        answer_type = response.headers.get("Content-Type")
        if path == API_ROOT and method == "GET" and (response.status == 404 or response.status < 300):
            problem = "404" if response.status == 404 else api_versions_problem(response.status, data, answer_type)
            if problem is not None:
                raise NotKubernetes(str(self._configuration.host), problem)
            self.kubernetes = True
        if renew and await self._renewed(response, pool, subject):  # once: a plugin handing out refused tokens is told as one
            return await self._once(method, path, query, body, content_type, subject, renew=False)
        if response.status >= 400:
            refused = self._told(error_from_answer(response.status, data, subject, response.headers.get("Retry-After"), answer_type))
            refused.read = method == "GET"  # a refused read is told the role that grants it (grants.reading_takes)
            if response.status == 404 and not is_status(data):
                await self._require_kubernetes()  # a 404 that is no Status: a server that is no API server at all?
            raise refused
        try:
            return object_from_answer(response.status, data, subject, answer_type)
        except StoreError:  # no JSON (a proxy's login page, a web server's index): is the server an API server at all?
            await self._require_kubernetes()
            raise

    def _told(self, refused: StoreError) -> StoreError:
        """A 401 to a kubeconfig user without credentials says that, not that its (absent) token is wrong."""
        if isinstance(refused, Unauthorized) and self._without_credentials is not None:
            return refused.without_credentials(self._without_credentials)
        return refused

    async def _require_kubernetes(self) -> None:
        """NotKubernetes when the server's /api is not a Kubernetes API server's (asked once per transport, after an
        answer no API server gives for an object: a 404 that is no Status, a success that is no JSON): a web server
        answering 404 to every path was taken for a cluster without our CRDs, its 404s for "not found". Where /api
        cannot be read (refused, away) the answer stands."""
        if self.kubernetes:
            return
        try:
            await self._once("GET", API_ROOT, (), None, JSON, Subject("discovery"))
        except NotKubernetes:
            raise
        except StoreError:
            return

    async def request(self, verb: str, method: str, path: str, subject: Subject, *, query: Query = (),
                      body: Any = None, content_type: str = JSON, idempotent: bool = True,
                      absent_after_retry_ok: bool = False) -> dict[str, Any] | None:
        """Send, retrying transient errors per the policy; then raise the last error for the caller to requeue.

        `idempotent=False` (a create with generateName) retries only what surely did not apply.
        `absent_after_retry_ok` (delete): NotFound after an ambiguous failure means our delete won; None.
        """
        plural = getattr(subject.kind, "plural", str(subject.kind))
        started = time.monotonic()
        waited = 0.0
        retry = 0
        ambiguous = False  # an earlier try may have been applied
        while True:
            self.stats.requests[(verb, plural)] += 1
            try:
                return await self._once(method, path, query, body, content_type, subject)
            except NotFound:
                if ambiguous and absent_after_retry_ok:
                    return None
                raise
            except AlreadyExists as error:
                error.repeated = ambiguous  # a named create whose earlier try was committed meets its own object
                raise
            except RetryableError as error:
                unapplied = _surely_not_applied(error)
                if not idempotent and not unapplied:
                    raise
                delay = self.retry.delay(retry, error.retry_after)
                attempts = self.retry.attempts if self.answered else min(self.retry.attempts, FIRST_ANSWER_TRIES)
                if retry + 1 >= attempts or waited + delay > self.retry.budget or self.closed:
                    if retry:  # "no answer within 30s" alone hides that the command spent minutes on it
                        error.message = f"{error.message} (gave up after {retry + 1} tries in {time.monotonic() - started:.0f}s)"
                        error.args = (error.message,)
                    raise
            ambiguous = ambiguous or not unapplied
            waited += delay
            retry += 1
            self.stats.retries += 1
            await self.retry.sleep(delay)

    async def open_stream(self, path: str, subject: Subject, query: Query, read_timeout: float, *,
                          renew: bool = True) -> aiohttp.ClientResponse:
        """Start a watch; the caller reads the body line by line and must `close_stream` it."""
        plural = getattr(subject.kind, "plural", str(subject.kind))
        self.stats.requests[("watch", plural)] += 1
        timeout = aiohttp.ClientTimeout(total=None, sock_connect=self.request_timeout, sock_read=read_timeout)
        response, pool = await self._send("GET", path, query, None, JSON, timeout, subject)
        if response.status >= 400:
            try:
                data = await response.read()
            except (TimeoutError, aiohttp.ClientError):
                data = b""
            finally:
                response.release()
                self._pools.give_back(pool)
            if renew and await self._renewed(response, pool, subject):
                return await self.open_stream(path, subject, query, read_timeout, renew=False)
            refused = self._told(error_from_answer(response.status, data, subject, response.headers.get("Retry-After")))
            refused.read = True  # a watch, or a log read
            raise refused
        self._streams[response] = pool
        return response

    def close_stream(self, response: aiohttp.ClientResponse) -> None:
        pool = self._streams.pop(response, None)
        response.close()  # drops the connection: the rest of an endless stream is not worth reading
        if pool is not None:
            self._pools.give_back(pool)

    async def close(self) -> None:
        """End every open watch stream, then the connection pool."""
        self.closed = True
        for response in list(self._streams):
            self.close_stream(response)
        await self._pools.close()

