# Sleep past any wall-clock limit.
sleep infinity
