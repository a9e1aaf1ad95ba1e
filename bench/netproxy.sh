#!/bin/sh
# The proxy of `network allow` next to a direct connection, in one run:
# request latency (sequential small GETs, each a new curl and a new
# connection) and throughput (one large GET), plain HTTP and HTTP CONNECT.
# Runs as root in a network namespace of its own, with the server on a
# test address (198.51.100.1) of its loopback: nothing leaves the machine.
#
#   SECURER_BIN  the securer binary (default: ./securer)
#   RUNS         requests per latency measure (default 200)
#   MIB          size of the large file in MiB (default 512)
set -u
securer=${SECURER_BIN:-./securer}
runs=${RUNS:-200}
mib=${MIB:-512}
if [ "$(id -u)" != 0 ]; then
  echo "bench-netproxy: needs root (a network namespace with a test address)"; exit 0
fi
for t in curl python3 ip unshare; do
  command -v $t >/dev/null 2>&1 || { echo "bench-netproxy: needs $t"; exit 0; }
done
if [ "${BENCH_NETPROXY_INNER:-}" != 1 ]; then
  BENCH_NETPROXY_INNER=1 exec unshare -n "$0" "$@"
fi

dir=$(mktemp -d /tmp/securer-bench-net-XXXXXX)
trap 'kill $srv 2>/dev/null; rm -rf "$dir"' EXIT
ip link set lo up
ip addr add 198.51.100.1/32 dev lo
head -c 1024 /dev/urandom > "$dir/small"
head -c $((mib * 1048576)) /dev/zero > "$dir/large"
echo "198.51.100.1 api.test" > "$dir/hosts"
# A threaded server that sends files with sendfile: not the bottleneck.
python3 -c '
import http.server, socketserver, sys, os
os.chdir(sys.argv[1])
class H(http.server.SimpleHTTPRequestHandler):
    protocol_version = "HTTP/1.0"
    def log_message(self, *a): pass
http.server.ThreadingHTTPServer(("198.51.100.1", 8080), H).serve_forever()
' "$dir" &
srv=$!
for _ in 1 2 3 4 5 6 7 8 9 10; do curl -s -o /dev/null http://198.51.100.1:8080/small && break; sleep 0.3; done

cat > "$dir/net.policy" <<EOF
include "minimal.policy"
mount tmpfs /tmp
network allow api.test:8080
network limit bytes unlimited
EOF
export SECURER_NET_HOSTS="$dir/hosts"

getter=${HTTP_GET:-$(dirname "$securer")/bench/http-get}
[ -x "$getter" ] || { echo "bench-netproxy: needs $getter (make bench/http-get)"; exit 0; }
echo "mount ro $(dirname "$getter")" >> "$dir/net.policy"
row() {  # label, then the command; prints its one line of figures
  label=$1; shift
  out=$("$@" 2>&1) || { printf '  %-30s failed: %s\n' "$label" "$out"; return; }
  printf '  %-30s %s\n' "$label" "$(echo "$out" | tail -1)"
}
echo "# network allow proxy vs direct, $(uname -r), $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "latency: $runs sequential GETs of 1 KiB from one process, a new connection each"
row "direct (no sandbox)" "$getter" direct 198.51.100.1 8080 api.test:8080 /small "$runs"
row "sandbox, proxy, plain HTTP" "$securer" run --policy "$dir/net.policy" -- "$getter" http 127.0.0.1 3128 api.test:8080 /small "$runs"
row "sandbox, proxy, CONNECT" "$securer" run --policy "$dir/net.policy" -- "$getter" connect 127.0.0.1 3128 api.test:8080 /small "$runs"
echo "throughput: 3 GETs of ${mib} MiB"
row "direct (no sandbox)" "$getter" direct 198.51.100.1 8080 api.test:8080 /large 3
row "sandbox, proxy, plain HTTP" "$securer" run --policy "$dir/net.policy" -- "$getter" http 127.0.0.1 3128 api.test:8080 /large 3
row "sandbox, proxy, CONNECT" "$securer" run --policy "$dir/net.policy" -- "$getter" connect 127.0.0.1 3128 api.test:8080 /large 3
