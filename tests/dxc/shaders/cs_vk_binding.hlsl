// [[vk::binding(b, s)]] overrides register() and is never shifted (built with -fvk-u-shift 10 all
// and -fvk-t-shift 10 all); without a set argument it means set 0, whatever the register space.
[[vk::binding(3, 1)]]
RWTexture2D<float4> outputImage : register(u0);

[[vk::binding(7)]]
Texture2D<float4> inputImage : register(t0, space2);

RWStructuredBuffer<float4> history : register(u1);

cbuffer Params : register(b0)
{
    float4 weights;
};

[numthreads(8, 8, 1)]
void main(uint3 id : SV_DispatchThreadID)
{
    float4 c = inputImage.Load(int3(id.xy, 0)) * weights;
    history[id.y * 8 + id.x] = c;
    outputImage[id.xy] = c;
}
