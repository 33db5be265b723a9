# Sourced by the benchmark scripts: field NAME JSON prints one numeric or string field of a
# flat JSON report (bin/croupier ... --json), or nothing if the report has no such field.
field() { sed -n "s/.*\"$1\":\"\\{0,1\\}\\([^,\"}]*\\).*/\\1/p" <<<"$2"; }
