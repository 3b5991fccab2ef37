// Registers of every class on number 0; built with -fvk-t-shift 10 all, -fvk-u-shift 20 all
// and -fvk-s-shift 30 0, which is how DXC users keep b0, t0, u0 and s0 apart.
cbuffer Params : register(b0)
{
    float scale;
    float3 pad;
};

StructuredBuffer<float> src : register(t0);
RWStructuredBuffer<float> dst : register(u0);
SamplerState linearClamp : register(s0);
Texture2D<float4> lut : register(t1);

[numthreads(64, 1, 1)]
void main(uint3 id : SV_DispatchThreadID)
{
    float4 l = lut.SampleLevel(linearClamp, float2(src[id.x], 0.5), 0);
    dst[id.x] = l.x * scale;
}
