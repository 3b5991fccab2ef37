// Two constant buffers on one register: a binding collision on every target.
cbuffer First : register(b0)
{
    float4 A;
};

cbuffer Second : register(b0)
{
    float4 B;
};

RWStructuredBuffer<float4> Out : register(u1);

[shader("compute")]
[numthreads(1, 1, 1)]
void Main(uint3 id : SV_DispatchThreadID)
{
    Out[id.x] = A + B;
}
