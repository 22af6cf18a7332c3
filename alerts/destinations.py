"""Where a webhook may go: a URL is checked when it is saved and again, with its name
resolved afresh, at every delivery (DNS can change after saving).

Refused: other schemes than http(s); credentials in the URL; plain http outside DEBUG
unless WEBHOOK_ALLOW_HTTP or the host is allow-listed; and any destination one of whose
addresses is not a public unicast one: loopback, private, shared (CGNAT), link-local,
cloud metadata, unspecified, multicast, reserved, documentation, whether written as an
address or reached through a name, IPv4 or IPv6, IPv4-mapped, 6to4 and NAT64 forms
included. Every address of a name must pass (a name may resolve to one public and one
internal address); the delivery then connects to the checked address (transport.py),
so nothing resolves the name a second time between the check and the connection.

WEBHOOK_ALLOWED_HOSTS lets an operator name internal receivers on purpose: host names
(matched exactly, case-insensitive; a one-word name such as a compose service `hooks`
too, which Django's URL check alone refuses: URLSyntax), addresses and networks (CIDR)."""

from __future__ import annotations

import ipaddress
import socket
import threading
from collections.abc import Callable
from dataclasses import dataclass
from urllib.parse import urlsplit, urlunsplit

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import URLValidator
from django.utils.deconstruct import deconstructible

Address = ipaddress.IPv4Address | ipaddress.IPv6Address
Resolver = Callable[[str, int], list[str]]

# Cloud metadata services, named as such in the refusal (they are link-local or ULA too).
METADATA = {
    ipaddress.ip_address("169.254.169.254"),  # AWS, GCP, Azure, OpenStack, ...
    ipaddress.ip_address("fd00:ec2::254"),  # AWS over IPv6
    ipaddress.ip_address("100.100.100.200"),  # Alibaba Cloud
}
NAT64 = ipaddress.ip_network("64:ff9b::/96")


class Refused(Exception):
    """The destination may never be reached: the delivery fails at once."""


class Unresolvable(Exception):
    """The name did not resolve (now): worth another attempt later."""


@dataclass(frozen=True, slots=True)
class Destination:
    url: str
    scheme: str
    host: str  # as written, lower case, without brackets
    port: int


@dataclass(frozen=True, slots=True)
class AllowList:
    names: frozenset[str]
    networks: tuple[ipaddress.IPv4Network | ipaddress.IPv6Network, ...]

    def allows_name(self, host: str) -> bool:
        return host.lower().rstrip(".") in self.names

    def allows_address(self, ip: Address) -> bool:
        return any(ip.version == net.version and ip in net for net in self.networks)


def allow_list(entries: list[str] | None = None) -> AllowList:
    """WEBHOOK_ALLOWED_HOSTS: host names, addresses and CIDR networks."""
    entries = settings.WEBHOOK_ALLOWED_HOSTS if entries is None else entries
    names, networks = set(), []
    for entry in (e.strip() for e in entries):
        if not entry:
            continue
        try:
            networks.append(ipaddress.ip_network(entry.strip("[]"), strict=False))
        except ValueError:
            names.add(entry.lower().rstrip("."))
    return AllowList(frozenset(names), tuple(networks))


def inward_reason(ip: Address) -> str | None:
    """Why `ip` is not a public unicast address, or None if it is one."""
    if isinstance(ip, ipaddress.IPv6Address):
        embedded = ip.ipv4_mapped or ip.sixtofour
        if embedded is None and ip in NAT64:
            embedded = ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
        if embedded is not None:
            reason = inward_reason(embedded)
            return f"it embeds {embedded}, {reason}" if reason else None
    if ip in METADATA:
        return "a cloud metadata address"
    for reason, flag in (
        ("unspecified", ip.is_unspecified),
        ("loopback", ip.is_loopback),
        ("link-local", ip.is_link_local),
        ("multicast", ip.is_multicast),
        ("reserved", ip.is_reserved),
        ("private", ip.is_private),
    ):
        if flag:
            return f"a {reason} address"
    if not ip.is_global:
        return "not a public address"
    return None


def split(url: str) -> Destination:
    """The URL's parts, or Refused for what no resolution can change."""
    try:
        parts = urlsplit(url.strip())
        port = parts.port
    except ValueError as error:
        raise Refused(f"not a valid URL: {error}") from None
    scheme = parts.scheme.lower()
    if scheme not in ("http", "https"):
        raise Refused("only http and https URLs can receive webhooks")
    if parts.username is not None or parts.password is not None or "@" in parts.netloc:
        raise Refused(
            "credentials in the URL are not allowed (the receiver checks the signature, "
            "X-Revreview-Signature, instead)"
        )
    host = (parts.hostname or "").rstrip(".")
    if not host:
        raise Refused("the URL has no host")
    return Destination(url.strip(), scheme, host, port or (443 if scheme == "https" else 80))


def literal(host: str) -> Address | None:
    try:
        return ipaddress.ip_address(host)
    except ValueError:
        return None


def require_https(destination: Destination, addresses: list[str], allowed: AllowList) -> None:
    """Plain http only with WEBHOOK_ALLOW_HTTP (DEBUG's default) or to an allow-listed
    receiver: a listed name, or addresses all in listed networks."""
    if destination.scheme == "https" or settings.WEBHOOK_ALLOW_HTTP:
        return
    if allowed.allows_name(destination.host):
        return
    ips = [ipaddress.ip_address(a.split("%", 1)[0]) for a in addresses]
    if ips and all(allowed.allows_address(ip) for ip in ips):
        return
    raise Refused(
        "only https URLs can receive webhooks (plain http is allowed with DEBUG, "
        "WEBHOOK_ALLOW_HTTP, or for a receiver in WEBHOOK_ALLOWED_HOSTS)"
    )


def check_addresses(destination: Destination, addresses: list[str], allowed: AllowList) -> str:
    """The address to connect to: the first, once every one has passed."""
    if not addresses:
        raise Unresolvable(f"{destination.host} has no address")
    if allowed.allows_name(destination.host):
        return addresses[0]
    for text in addresses:
        ip = ipaddress.ip_address(text.split("%", 1)[0])  # an IPv6 zone is not part of it
        reason = inward_reason(ip)
        if reason and not allowed.allows_address(ip):
            named = "" if literal(destination.host) is not None else f"{destination.host} is "
            raise Refused(
                f"{named}{ip}, {reason}: webhooks may not reach internal addresses "
                "(an internal receiver must be listed in WEBHOOK_ALLOWED_HOSTS)"
            )
    return addresses[0]


def system_resolver(host: str, port: int) -> list[str]:
    """Every address the system resolver gives for `host`, in its order, once each."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError) as error:
        raise Unresolvable(f"{host} does not resolve: {error}") from None
    return list(dict.fromkeys(str(info[4][0]) for info in infos))


def resolve_within(resolver: Resolver, host: str, port: int, seconds: float) -> list[str]:
    """The resolver's answer, or Unresolvable after `seconds` (a resolver that does not
    answer must not hold the attempt past its deadline)."""
    result: list = []

    def run() -> None:
        try:
            result.append(resolver(host, port))
        except Exception as error:  # noqa: BLE001 - handed to the caller below
            result.append(error)

    thread = threading.Thread(target=run, daemon=True, name="webhook-resolve")
    thread.start()
    thread.join(max(0.0, seconds))
    if not result:
        raise Unresolvable(f"{host} did not resolve within {seconds:.1f} s")
    if isinstance(result[0], Exception):
        raise result[0]
    return result[0]


def pin(
    url: str, resolver: Resolver = system_resolver, *, seconds: float = 10.0
) -> tuple[Destination, str]:
    """Check `url`, resolve its host now and check every address: the destination and
    the address to connect to. Raises Refused or Unresolvable."""
    allowed = allow_list()
    destination = split(url)
    addresses = (
        [destination.host]
        if literal(destination.host) is not None
        else resolve_within(resolver, destination.host, destination.port, seconds)
    )
    address = check_addresses(destination, addresses, allowed)
    require_https(destination, addresses, allowed)
    return destination, address


def validate(url: str, resolver: Resolver = system_resolver) -> None:
    """The check when a subscription is saved: Refused with the reason. A name that does
    not resolve now is accepted (if https, or listed); every delivery checks it again."""
    try:
        pin(url, resolver, seconds=5.0)
    except Unresolvable:
        require_https(split(url), [], allow_list())


@deconstructible
class URLSyntax(URLValidator):
    """Django's check of a URL's syntax, except that a one-word host named in
    WEBHOOK_ALLOWED_HOSTS passes: Django asks every name for a dot and a top-level
    domain, which a compose service (`hooks`) never has. The rest of such a URL (its
    port, its path) is checked as for any other."""

    def __call__(self, value: str) -> None:
        try:
            super().__call__(value)
        except ValidationError:
            dotted = _with_dotted_host(value)
            if dotted is None:
                raise
            super().__call__(dotted)


def _with_dotted_host(url: str) -> str | None:
    """`url` with its host given a dot, if the host is a one-word allow-listed name;
    None otherwise."""
    try:
        parts = urlsplit(url)
        host = parts.hostname
    except ValueError:
        return None
    if not host or "." in host or not allow_list().allows_name(host):
        return None
    userinfo, at, place = parts.netloc.rpartition("@")
    start = place.lower().index(host)
    place = f"{place[:start]}{host}.internal{place[start + len(host) :]}"
    return urlunsplit(parts._replace(netloc=f"{userinfo}{at}{place}"))
