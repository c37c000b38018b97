# oldgate.sh - sourced by call2.sh and call3.sh after the prologue: the old
# gate of the comparisons, built in /tmp/krex-old-build from the carried
# tree's source with the bounded queue before session 22 (gate/gate_queue.[ch]
# as committed before it, carried in .gpu/old/).
st old-build
rm -rf /tmp/krex-old-src /tmp/krex-old-build && cp -a /tmp/krex-src /tmp/krex-old-src &&
	cp .gpu/old/gate_queue.c .gpu/old/gate_queue.h /tmp/krex-old-src/gate/ &&
	mkdir -p /tmp/krex-old-build && cd /tmp/krex-old-build &&
	timeout 60 /tmp/krex-old-src/configure -q --prefix=/opt/krex-old --with-cuda=/usr/local/cuda --without-slurm >/dev/null 2>&1 &&
	timeout 90 make -j16 >/dev/null 2>&1
cd - >/dev/null
[ -f /tmp/krex-old-build/gate/.libs/libkrexgate.so ] || { echo "OLD BUILD FAILED"; exit 1; }
