// A real clash: a constant buffer and a structured buffer both on binding 0 of set 0 (DXC
// would silently emit both on one binding). Not a texture+sampler pair, so it is an error.
cbuffer Params : register(b0)
{
    uint count;
    uint3 pad;
};

StructuredBuffer<float> values : register(t0); // EXPECT-ERROR
RWStructuredBuffer<float> results : register(u1);

[numthreads(64, 1, 1)]
void main(uint3 id : SV_DispatchThreadID)
{
    if (id.x < count)
    {
        results[id.x] = values[id.x] * 2.0;
    }
}
