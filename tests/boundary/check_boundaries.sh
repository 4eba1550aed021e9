#!/usr/bin/env bash
# Fails if the GUI side touches libtorch, or if torch and Qt headers could meet:
#  1. dflash-inspector must not have libtorch/libc10 among its needed libraries;
#  2. no file under ui/ or app/inspector/ includes a torch, ATen, c10 or caffe2 header;
#  3. no compile command of a ui/ or app/inspector/ file has torch's include directory;
#  4. no file under core/engine/ or app/eval/ includes a Qt header.
set -u
inspector=$1 src=$2 compile_commands=$3
fail=0
report() { echo "BOUNDARY VIOLATION: $*"; fail=1; }

if [[ -n "$inspector" && "$inspector" != "none" ]]; then
  needed=$(readelf -d "$inspector" | awk '/NEEDED/ {print $NF}')
  grep -Ei 'torch|c10' <<<"$needed" && report "dflash-inspector links libtorch: $(grep -Ei 'torch|c10' <<<"$needed" | tr '\n' ' ')"
fi

hits=$(grep -rnE '^\s*#\s*include\s*[<"](torch|ATen|c10|caffe2)/' "$src/ui" "$src/app/inspector" 2>/dev/null)
[[ -n "$hits" ]] && report "torch header included on the GUI side:"$'\n'"$hits"

if [[ -f "$compile_commands" ]]; then
  bad=$(python3 - "$compile_commands" "$src" <<'PY'
import json, sys
cmds, src = json.load(open(sys.argv[1])), sys.argv[2]
for c in cmds:
    f = c["file"]
    if (f.startswith(src + "/ui/") or f.startswith(src + "/app/inspector/")) and "torch/include" in c.get("command", " ".join(c.get("arguments", []))):
        print(f)
PY
)
  [[ -n "$bad" ]] && report "GUI sources compiled with torch include paths:"$'\n'"$bad"
fi

hits=$(grep -rnE '^\s*#\s*include\s*[<"]Q[A-Za-z]+(/|>|")' "$src/core" "$src/app/eval" 2>/dev/null)
[[ -n "$hits" ]] && report "Qt header included on the engine/core side:"$'\n'"$hits"

[[ $fail -eq 0 ]] && echo "boundaries hold"
exit $fail
