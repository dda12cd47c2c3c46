"""What every process of ours is made of before it does any memory work: its command line and
listening addresses, ports, CPU and allocator tuning, JSON logs, its version, background tasks and
the kinds of settings it reads. Nothing here knows what a memory is."""
