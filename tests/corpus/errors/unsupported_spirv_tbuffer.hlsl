// A tbuffer compiled for SPIR-V: an error at the declaration naming the target.
tbuffer Palette
{
    float4 Colors[4];
    float4 Fallback;
};

RWStructuredBuffer<float4> Out;

[shader("compute")]
[numthreads(4, 1, 1)]
void Lookup(uint3 id : SV_DispatchThreadID)
{
    Out[id.x] = Colors[id.x % 4] + Fallback;
}
