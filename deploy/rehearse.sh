#!/usr/bin/env bash
# Rehearses deploy/kubernetes on this machine, without Kubernetes: starts the nodes exactly as
# the StatefulSet's container says (the image's entry point, its args with $(VAR) taken from the
# ConfigMap, its env), each in its own network namespace with its own address, makes the
# headless service's name resolve to all of them inside the driver's namespace, as cluster DNS
# would, and runs the driver Job's command against that name. Then checks the sort's output.
#
#   sudo deploy/rehearse.sh [records = 1000000]
#
# Needs root (network namespaces), iproute2 and python3 with PyYAML. Container paths are mapped
# to a temporary folder: the spill volume to one folder per node, /data to one shared folder;
# /dev/shm is the host's. The token Secret ships empty, so the rehearsal makes one. Everything it
# makes (namespaces, bridge, processes, files) is removed on exit.
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
RECORDS="${1:-1000000}"
[ "$(id -u)" = 0 ] || { echo "rehearse: needs root to make network namespaces" >&2; exit 2; }
command -v ip >/dev/null || { echo "rehearse: needs iproute2's ip (apt-get install iproute2)" >&2; exit 2; }
python3 -c 'import yaml' 2>/dev/null || { echo "rehearse: needs python3 with PyYAML (apt-get install python3-yaml)" >&2; exit 2; }

# The image's entry point is `java @croupier-jvm.flags -cp <the CLI's jars> <main>`; here
# bin/croupier is that same command (same flags file, same jars), built if missing or stale.
CROUPIER="$ROOT/bin/croupier"
"$CROUPIER" help >/dev/null
grep -q '^ENTRYPOINT .*"dev.croupier.examples.CroupierCli"\]$' "$ROOT/deploy/Dockerfile" \
  || { echo "rehearse: the Dockerfile's entry point is not the CLI bin/croupier runs" >&2; exit 2; }

WORK="$(mktemp -d /tmp/croupier-rehearse-XXXXXX)"
ID="rh$$"
SUBNET="10.251.$(( $$ % 200 + 20 ))"
BRIDGE="crp${ID}b"
PIDS=()
NAMESPACES=()

cleanup() {
  local status=$?
  if [ "$status" != 0 ]; then
    for log in "$WORK"/node-*.log; do
      [ -f "$log" ] && { echo "rehearse: $(basename "$log"), last lines:" >&2; tail -n 20 "$log" >&2; }
    done
  fi
  # SIGTERM drains a node (nothing runs now: it exits at once), as Kubernetes stops a pod
  for p in "${PIDS[@]:-}"; do [ -n "$p" ] && kill -TERM "$p" 2>/dev/null || true; done
  for _ in $(seq 1 50); do
    alive=0
    for p in "${PIDS[@]:-}"; do [ -n "$p" ] && kill -0 "$p" 2>/dev/null && alive=1; done
    [ "$alive" = 0 ] && break
    sleep 0.2
  done
  for p in "${PIDS[@]:-}"; do [ -n "$p" ] && kill -KILL "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  for ns in "${NAMESPACES[@]:-}"; do
    [ -n "$ns" ] || continue
    ip netns del "$ns" 2>/dev/null || true
    rm -rf "/etc/netns/$ns"
  done
  ip link del "$BRIDGE" 2>/dev/null || true
  rm -rf "$WORK"
}
trap cleanup EXIT

# What the manifests say, as shell words: one line per item.
python3 - "$ROOT/deploy" "$WORK" > "$WORK/plan" <<'PY'
import re, shlex, sys, yaml, glob
deploy, work = sys.argv[1], sys.argv[2]
docs = [d for f in sorted(glob.glob(deploy + "/kubernetes/*.yaml")) for d in yaml.safe_load_all(open(f)) if d]
one = lambda kind: next(d for d in docs if d["kind"] == kind)
config = one("ConfigMap")["data"]
node = one("StatefulSet")["spec"]["template"]["spec"]["containers"][0]
job = one("Job")["spec"]["template"]["spec"]["containers"][0]
service = one("Service")
expand = lambda a: re.sub(r"\$\((\w+)\)", lambda m: config[m.group(1)], a)
def mapped(a, node_dir):
    a = a.replace("/var/lib/croupier/spill", node_dir + "/spill")
    return a.replace("/data", work + "/data") if a.startswith("/data") else a
print("REPLICAS=%d" % one("StatefulSet")["spec"]["replicas"])
print("SERVICE=%s" % service["metadata"]["name"])
print("PORT=%d" % service["spec"]["ports"][0]["port"])
print("NODE_ARGS=(%s)" % " ".join(shlex.quote(mapped(expand(a), work + "/node-$i")) for a in node["args"]))
env = dict(config)
env.update({e["name"]: e.get("value", "") for e in node.get("env", []) if "value" in e})
print("NODE_ENV=(%s)" % " ".join(shlex.quote("%s=%s" % kv) for kv in env.items()))
print("JOB_ARGS=(%s)" % " ".join(shlex.quote(mapped(a, work + "/driver")) for a in job["args"]))
print("JOB_ENV=(%s)" % " ".join(shlex.quote("%s=%s" % (e["name"], e["value"])) for e in job.get("env", []) if "value" in e))
PY
# shellcheck disable=SC1091
source "$WORK/plan"
TOKEN="$(head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n')"
mkdir -p "$WORK/data"

ip link add "$BRIDGE" type bridge
ip addr add "$SUBNET.1/24" dev "$BRIDGE"
ip link set "$BRIDGE" up
host() { # host K: a namespace with address SUBNET.(10+K) on the bridge
  local k="$1" ns="crp-$ID-$1"
  ip netns add "$ns"; NAMESPACES+=("$ns")
  ip link add "crp${ID}h$k" type veth peer name "crp${ID}p$k"
  ip link set "crp${ID}p$k" netns "$ns"
  ip link set "crp${ID}h$k" master "$BRIDGE"
  ip link set "crp${ID}h$k" up
  ip netns exec "$ns" ip addr add "$SUBNET.$((10 + k))/24" dev "crp${ID}p$k"
  ip netns exec "$ns" ip link set "crp${ID}p$k" up
  ip netns exec "$ns" ip link set lo up
}

echo "rehearse: $REPLICAS nodes as the StatefulSet says: croupier ${NODE_ARGS[*]}"
HOSTS=""
for (( i = 0; i < REPLICAS; i++ )); do
  host "$i"
  mkdir -p "$WORK/node-$i/spill"
  args=("${NODE_ARGS[@]//\$i/$i}")
  ip netns exec "crp-$ID-$i" env "${NODE_ENV[@]}" CROUPIER_TOKEN="$TOKEN" \
    "$CROUPIER" "${args[@]}" > "$WORK/node-$i.log" 2>&1 &
  PIDS+=("$!")
  HOSTS="$HOSTS$SUBNET.$((10 + i)) $SERVICE"$'\n'
done
for (( i = 0; i < REPLICAS; i++ )); do
  for _ in $(seq 1 300); do grep -q "listening on" "$WORK/node-$i.log" && break; sleep 0.1; done
  grep -q "listening on" "$WORK/node-$i.log" || { echo "rehearse: node $i did not start:" >&2; cat "$WORK/node-$i.log" >&2; exit 1; }
done
echo "rehearse: nodes ready; $SERVICE resolves to $(echo "$HOSTS" | cut -d' ' -f1 | xargs) in the driver's namespace"

DRIVER=$REPLICAS
host "$DRIVER"
mkdir -p "/etc/netns/crp-$ID-$DRIVER"
printf '127.0.0.1 localhost\n%s' "$HOSTS" > "/etc/netns/crp-$ID-$DRIVER/hosts"

"$CROUPIER" gensort "$RECORDS" "$WORK/data/in" >/dev/null
echo "rehearse: the driver Job's command: croupier ${JOB_ARGS[*]}"
ip netns exec "crp-$ID-$DRIVER" env "${JOB_ENV[@]}" CROUPIER_TOKEN="$TOKEN" \
  "$CROUPIER" "${JOB_ARGS[@]}" | tee "$WORK/driver.json"
ip netns exec "crp-$ID-$DRIVER" env CROUPIER_TOKEN="$TOKEN" "$CROUPIER" status --cluster "$SERVICE:$PORT" --json \
  > "$WORK/status.json"
"$CROUPIER" valsort "$WORK/data/in" --json > "$WORK/input.json" || true # unsorted: exits 1, still counts
"$CROUPIER" valsort "$WORK/data/out" --json | tee "$WORK/valsort.json"
python3 - "$WORK" <<'PY'
import json, sys
w = sys.argv[1]
report, check = json.load(open(w + "/driver.json")), json.load(open(w + "/valsort.json"))
given = json.load(open(w + "/input.json"))
assert check["ordered"], "the output is not in order"
assert check["records"] == given["records"] and check["checksum"] == given["checksum"], "records lost or changed"
status = json.load(open(w + "/status.json"))
listed = status["nodes"] if isinstance(status, dict) else status
assert len(listed) == report["nodes"], "status by the service's name lists every node: %s" % status
print("rehearse: passed: %d records sorted on %d nodes reached through the service's name" % (report["records"], report["nodes"]))
PY
