// An include and defines given on the command line (-D SCALE=3 -D OFFSET=1).
#include "common.hlsli"

#ifndef OFFSET
#define OFFSET 0
#endif

RWStructuredBuffer<Payload> Items : register(u0);

[shader("compute")]
[numthreads(16, 1, 1)]
void CSMain(uint3 id : SV_DispatchThreadID)
{
    Items[id.x].Value = apply_scale(Items[id.x].Value) + OFFSET;
}
