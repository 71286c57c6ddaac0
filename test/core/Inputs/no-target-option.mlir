// expected-error @+1 {{pb-attach-target: no target given; valid targets: amd-gfx90a,}}
module {
}
