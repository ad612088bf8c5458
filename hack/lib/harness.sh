# Sourced by the lint scripts: the harness directories of hack/harness-packages.txt (one a line, comments and
# blank lines skipped), each checked to exist, into the array HARNESS; in_harness DIR says whether DIR lies in
# one of them.
HARNESS=()
while read -r dir _; do
  [[ -z $dir || $dir == \#* ]] && continue
  [[ -d $dir ]] || { echo "hack/harness-packages.txt names $dir, which does not exist" >&2; exit 1; }
  HARNESS+=("$dir")
done < hack/harness-packages.txt

in_harness() {
  local h
  for h in "${HARNESS[@]}"; do
    [[ $1/ == "$h"/* ]] && return 0
  done
  return 1
}
